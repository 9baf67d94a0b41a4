"""W&B Weave traces: agent spans (`/agents/spans/query`, OTel GenAI style), the chat view of a trace
(`/agents/traces/chat`) and classic calls (`op_name`, `inputs`, `output`, `parent_id`), as JSON or JSONL
responses or inside a recorded HTTP cassette (YAML). One `trace_id` is one trajectory.
"""
from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import yaml

from trajscope.format import RecordError, Step, Trajectory

from ._actions import make_step, parse_arguments
from ._context import ImportContext, assemble
from ._fields import Where, as_text, need_list, need_object
from ._json_stream import check_text, iter_records
from ._llm_payloads import deep_decode, output_text, tool_requests, user_text
from ._traced_tools import traced_tool_step
from ._yaml_nesting import check_yaml_nesting

WEAVE_NOTES = {"gold_answers": "Weave traces carry no gold answer",
               "gold_passages": "Weave traces carry no gold passages"}
_LLM_OPS = ("chat.completions", "messages.create", "generate_content", "completions.create", "responses.create")
_MAX_CASSETTE_BYTES = 64 << 20


@dataclass
class _Trace:
    """What one file says about one trace: its spans, calls and chat-view messages."""

    trace_id: str
    where: Where
    spans: list[tuple[dict[str, Any], Where]] = field(default_factory=list)
    calls: list[tuple[dict[str, Any], Where]] = field(default_factory=list)
    chat: list[tuple[dict[str, Any], Where]] = field(default_factory=list)


def _step(ctx: ImportContext, name: str | None, args: Any, result: Any, where: Where, ref: str,
          error: str | None = None) -> Step:
    args = args if isinstance(args, dict) else parse_arguments(args, where)
    return traced_tool_step(ctx, name=name, args=args, observation=as_text(result), result=deep_decode(result, where),
                            error=error, source_ref=ref)


def _span_steps(ctx: ImportContext, trace: _Trace) -> tuple[list[Step], str | None, list[str], Counter[str]]:
    """(steps, question text, answer candidates, spans by operation) of a trace's agent spans."""
    spans = sorted(trace.spans, key=lambda s: str(s[0].get("started_at") or ""))
    steps: list[Step] = []
    question: str | None = None
    answers: list[str] = []
    ops: Counter[str] = Counter()
    for span, at in spans:
        op = str(span.get("operation_name") or "")
        ops[op] += 1
        if question is None:
            question = user_text(deep_decode(span.get("input_messages"), at.at("input_messages")))
        if op == "execute_tool":
            failed = str(span.get("status_code") or "").upper() == "ERROR"
            steps.append(_step(ctx, span.get("tool_name") or None,
                               deep_decode(span.get("tool_call_arguments"), at.at("tool_call_arguments")),
                               deep_decode(span.get("tool_call_result"), at.at("tool_call_result")),
                               at.at("tool_call_arguments"), f"span:{span.get('span_id')}",
                               error=(span.get("status_message") or span.get("error_type") or "error") if failed
                               else None))
        elif op == "chat":
            output = deep_decode(span.get("output_messages"), at.at("output_messages"))
            text = output_text(output) if output else None
            if text and text.strip() and not tool_requests(output):
                answers.append(text)
    return steps, question, answers, ops


def _op_name(call: dict[str, Any]) -> str:
    name = str(call.get("display_name") or call.get("op_name") or "")
    if "/op/" in name:
        name = name.split("/op/", 1)[1]
    return name.split(":", 1)[0]


def _call_steps(ctx: ImportContext, trace: _Trace) -> tuple[list[Step], str | None, list[str], Counter[str]]:
    """(steps, question text, answer candidates, calls by op) of a trace's classic Weave calls."""
    calls = sorted(trace.calls, key=lambda c: str(c[0].get("started_at") or ""))
    ids = {c.get("id") for c, _ in calls}
    parents = {c.get("parent_id") for c, _ in calls}
    llm = {c.get("id") for c, _ in calls if any(k in _op_name(c) for k in _LLM_OPS)
           or isinstance(c.get("output"), dict) and "choices" in c["output"]}
    requested = {name for c, at in calls if c.get("id") in llm
                 for _, name, _ in tool_requests(deep_decode(c.get("output"), at.at("output")))}
    steps: list[Step] = []
    question: str | None = None
    answers: list[str] = []
    ops: Counter[str] = Counter(_op_name(c) for c, _ in calls)
    for call, at in calls:
        root = call.get("parent_id") not in ids
        name = _op_name(call)
        inputs = deep_decode(call.get("inputs"), at.at("inputs"))
        if root:
            if question is None:
                question = user_text(inputs) or (next((v for v in inputs.values() if isinstance(v, str) and v.strip()),
                                                       None) if isinstance(inputs, dict) else None)
            text = output_text(deep_decode(call.get("output"), at.at("output")))
            if text and text.strip():
                answers.append(text)
        elif call.get("id") not in llm and (name in requested or call.get("id") not in parents):
            args = {k: v for k, v in inputs.items() if k != "self"} if isinstance(inputs, dict) else inputs
            exception = call.get("exception")
            steps.append(_step(ctx, name or None, args, deep_decode(call.get("output"), at.at("output")),
                               at.at("inputs"), f"call:{call.get('id')}",
                               error=str(exception) if exception else None))
    return steps, question, answers, ops


def _chat_steps(ctx: ImportContext, trace: _Trace) -> tuple[list[Step], str | None, list[str]]:
    """(steps, question text, answers) of a trace's chat view (user / tool call / assistant messages)."""
    steps: list[Step] = []
    question: str | None = None
    answers: list[str] = []
    for message, at in trace.chat:
        kind = message.get("type")
        body = inner if isinstance(kind, str) and isinstance(inner := message.get(kind), dict) else message
        text = body.get("text") if isinstance(body.get("text"), str) else body.get("content")
        if kind == "user_message" and question is None and isinstance(text, str):
            question = text
        elif kind == "assistant_message" and isinstance(text, str) and text.strip():
            answers.append(text)
        elif kind == "tool_call":
            name = body.get("name")
            if not isinstance(name, str) or not name:
                raise at.error("tool call without a name", "tool_call.name")
            steps.append(_step(ctx, name, deep_decode(body.get("arguments"), at.at("tool_call.arguments")),
                               body.get("result", body.get("output")), at.at("tool_call.arguments"),
                               f"message:{message.get('id') or name}"))
    return steps, question, answers


def _trajectory(ctx: ImportContext, trace: _Trace) -> Trajectory:
    span_steps, span_q, span_answers, ops = _span_steps(ctx, trace)
    call_steps, call_q, call_answers, call_ops = _call_steps(ctx, trace)
    chat_steps, chat_q, chat_answers = _chat_steps(ctx, trace)
    # The chat view and the spans show one trace twice: its tool calls are taken from the spans when both exist.
    steps = [*span_steps, *call_steps] or chat_steps
    answers = chat_answers or span_answers or call_answers
    if answers:
        steps.append(make_step("final", tool_name=None, args={}, answer=answers[-1]))
    text = chat_q or span_q or call_q
    if text is None:
        text = f"(question text not captured: trace {trace.trace_id})"
        warning = ("some Weave traces carry no question text (their inputs were not returned): the text is a "
                   "placeholder; pass --questions FILE to join it by trace id")
        if warning not in ctx.notes.warnings:
            ctx.notes.warnings.append(warning)
    spans = [s for s, _ in trace.spans]
    model = next((m for s in spans if isinstance(m := s.get("response_model") or s.get("request_model"), str) and m),
                 None)
    tokens_in = [s["input_tokens"] for s in spans if isinstance(s.get("input_tokens"), int)]
    tokens_out = [s["output_tokens"] for s in spans if isinstance(s.get("output_tokens"), int)]
    stamps = sorted(str(x) for s in (*spans, *(c for c, _ in trace.calls)) for x in (s.get("started_at"),
                                                                                   s.get("ended_at")) if x)
    meta: dict[str, Any] = {"trace_id": trace.trace_id}
    if ops:
        meta["spans"] = dict(ops)
    if call_ops:
        meta["calls"] = dict(call_ops)
    question = ctx.question(trace.where, source_id=trace.trace_id, text=text)
    return assemble(ctx, run=ctx.run(model=model), question=question, steps=steps,
                    started_at=stamps[0] if stamps else None, finished_at=stamps[-1] if stamps else None,
                    total_tokens_in=sum(tokens_in) if tokens_in else None,
                    total_tokens_out=sum(tokens_out) if tokens_out else None, metadata=meta)


def _trace_id(item: dict[str, Any], where: Where) -> str:
    value = item.get("trace_id")
    if not isinstance(value, str) or not value:
        raise where.error("missing trace id", "trace_id")
    return value


def _add_span(span: Any, where: Where, traces: dict[str, _Trace]) -> None:
    span = need_object(span, where)
    tid = _trace_id(span, where)
    traces.setdefault(tid, _Trace(tid, where)).spans.append((span, where))


def _gather(payload: Any, where: Where, traces: dict[str, _Trace]) -> None:
    """File a response body's spans, calls or chat messages under their traces."""
    if isinstance(payload, list):
        for i, item in enumerate(payload):
            _gather(item, where.at(i), traces)
        return
    payload = need_object(payload, where)
    if "spans" in payload:
        for i, span in enumerate(need_list(payload["spans"], where.at("spans"))):
            _add_span(span, where.at("spans").at(i), traces)
    elif "calls" in payload:
        _gather(need_list(payload["calls"], where.at("calls")), where.at("calls"), traces)
    elif "messages" in payload and "trace_id" in payload:
        tid = _trace_id(payload, where)
        for i, message in enumerate(need_list(payload["messages"], where.at("messages"))):
            at = where.at("messages").at(i)
            traces.setdefault(tid, _Trace(tid, where)).chat.append((need_object(message, at), at))
    elif "op_name" in payload:
        tid = _trace_id(payload, where)
        traces.setdefault(tid, _Trace(tid, where)).calls.append((payload, where))


def _cassette(ctx: ImportContext, traces: dict[str, _Trace]) -> None:
    """The Weave response bodies of a recorded HTTP cassette (a YAML list of request / response pairs)."""
    if ctx.path.stat().st_size > _MAX_CASSETTE_BYTES:
        raise RecordError(ctx.path, 1, None, f"a cassette over {_MAX_CASSETTE_BYTES >> 20} MB is not read")
    text = ctx.path.read_text(encoding="utf-8-sig")
    check_yaml_nesting(text, ctx.path)  # a cassette is YAML the user supplies: nesting and aliases bounded too
    loader = yaml.SafeLoader(text)
    try:
        nodes = loader.get_single_node()
        interactions = loader.construct_document(nodes) if nodes is not None else []
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise RecordError(ctx.path, mark.line + 1 if mark else 1, None, f"malformed YAML: {exc}") from None
    finally:
        loader.dispose()
    where = ctx.where(1)
    for i, interaction in enumerate(need_list(interactions, where)):
        line = nodes.value[i].start_mark.line + 1
        at = ctx.where(line, f"[{i}]")
        interaction = need_object(interaction, at)
        response = need_object(interaction.get("response"), at.at("response"))
        body = response.get("body")
        if not isinstance(body, str) or not body.lstrip().startswith(("{", "[")):
            continue
        try:
            payload = json.loads(body)
        except json.JSONDecodeError as exc:
            raise at.error(f"response body is not JSON: {exc.msg}", "response.body") from None
        _gather(payload, at.at("response.body"), traces)


def import_weave(ctx: ImportContext) -> Iterator[Trajectory]:
    """One trajectory per trace, in order of first appearance."""
    traces: dict[str, _Trace] = {}
    with open(ctx.path, "rb") as fh:
        head = fh.read(8192)
    check_text(ctx.path, head)
    if head.removeprefix(b"\xef\xbb\xbf").lstrip().startswith((b"{", b"[")):
        for line, key, value in iter_records(ctx.path, frozenset({"spans", "calls"})):
            where = ctx.where(line, key or "")
            if key is not None and key.startswith("spans["):  # one item of a streamed `spans` list
                _add_span(value, where, traces)
            else:
                _gather(value, where, traces)
    else:
        _cassette(ctx, traces)
    for trace in traces.values():
        yield _trajectory(ctx, trace)
