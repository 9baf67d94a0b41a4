"""TRAIL-style span exports (Patronus AI): `{trace_id, spans: [...]}` with nested `child_spans` and
OpenInference attributes, as smolagents agents write them. One trace per trajectory.

A CodeAgent's step is a CHAIN span ("Step N") holding the LLM call that wrote the code and any tool
spans the code called. Each LLM span becomes one step (its code, the execution log, the error when the
code failed) and each tool span one more, so every span an annotator can point at (TRAIL's errors name
LLM and tool spans) is some step's `source_ref` (`span:<id>`).
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from trajscope.format import ErrorStep, Step, ToolStep, Trajectory, loads_bounded

from ._actions import make_step
from ._context import ImportContext, assemble
from ._fields import Where, need_list, need_object
from ._json_stream import iter_whole_documents

_CODE = re.compile(r"Code:\s*```(?:py|python)?[ \t]*\n(?P<code>.*?)```", re.S)
_DURATION = re.compile(r"^P(?:(?P<d>\d+(?:\.\d+)?)D)?(?:T(?:(?P<h>\d+(?:\.\d+)?)H)?(?:(?P<m>\d+(?:\.\d+)?)M)?"
                       r"(?:(?P<s>\d+(?:\.\d+)?)S)?)?$")
_CODE_TOOL = "python_interpreter"  # what smolagents calls the tool that runs a CodeAgent's code


@dataclass
class _Span:
    span_id: str
    parent_id: str | None
    name: str
    kind: str
    start: datetime | None
    latency_ms: float | None
    status: str
    status_message: str | None
    attributes: dict[str, Any]
    logs: list[Any]
    where: Where
    children: list[_Span] = field(default_factory=list)


def _time(value: Any, where: Where) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        stamp = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise where.error("expected an ISO-8601 time", "timestamp") from None
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)


def _duration_ms(value: Any) -> float | None:
    m = _DURATION.match(value) if isinstance(value, str) else None
    if m is None:
        return None
    parts = {k: float(v) for k, v in m.groupdict().items() if v}
    return 1000.0 * (parts.get("d", 0) * 86400 + parts.get("h", 0) * 3600 + parts.get("m", 0) * 60
                     + parts.get("s", 0))


def _walk(raw: Any, where: Where, out: list[_Span]) -> None:
    raw = need_object(raw, where)
    span_id = raw.get("span_id")
    if not isinstance(span_id, str) or not span_id:
        raise where.error("missing span id", "span_id")
    attrs = need_object(raw.get("span_attributes") or {}, where.at("span_attributes"))
    span = _Span(span_id=span_id, parent_id=raw.get("parent_span_id") or None, name=str(raw.get("span_name") or ""),
                 kind=str(attrs.get("openinference.span.kind") or "").upper(), start=_time(raw.get("timestamp"), where),
                 latency_ms=_duration_ms(raw.get("duration")), status=str(raw.get("status_code") or ""),
                 status_message=raw.get("status_message") or None, attributes=attrs,
                 logs=raw.get("logs") if isinstance(raw.get("logs"), list) else [], where=where)
    out.append(span)
    for i, child in enumerate(need_list(raw.get("child_spans") or [], where.at("child_spans"))):
        _walk(child, where.at("child_spans").at(i), out)


def _int(value: Any) -> int | None:
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _json(span: _Span, key: str) -> Any:
    value = span.attributes.get(key)
    if isinstance(value, str) and value[:1] in "[{":
        try:
            return loads_bounded(value, path=span.where.path, line=span.where.line,
                                 field=span.where.at(f"span_attributes.{key}").prefix)
        except json.JSONDecodeError:
            return value
    return value


def _llm_output(span: _Span) -> str | None:
    text = span.attributes.get("llm.output_messages.0.message.content")
    if isinstance(text, str):
        return text
    out = _json(span, "output.value")
    return out.get("content") if isinstance(out, dict) and isinstance(out.get("content"), str) else None


def _llm_step(span: _Span, chain: _Span | None) -> Step:
    text = _llm_output(span)
    code = _CODE.search(text or "")
    common: dict[str, Any] = dict(thought=text, raw=text, source_ref=f"span:{span.span_id}",
                                  tokens_in=_int(span.attributes.get("llm.token_count.prompt")),
                                  tokens_out=_int(span.attributes.get("llm.token_count.completion")),
                                  latency_ms=chain.latency_ms if chain is not None else span.latency_ms)
    args = {"code": code.group("code")} if code else {}
    observation = chain.attributes.get("output.value") if chain is not None else None
    observation = observation if isinstance(observation, str) else None
    if chain is not None and chain.status.upper() == "ERROR":
        return ErrorStep(error_type="tool_error", message=chain.status_message, tool_name=_CODE_TOOL if code else None,
                         args=args, observation=observation, **common)
    return ToolStep(tool_name=_CODE_TOOL if code else None, args=args, observation=observation, **common)


def _tool_step(ctx: ImportContext, span: _Span) -> Step:
    name = span.attributes.get("tool.name") if isinstance(span.attributes.get("tool.name"), str) else span.name
    raw_args = _json(span, "input.value")
    args = raw_args if isinstance(raw_args, dict) else ({} if raw_args is None else {"input": raw_args})
    output = span.attributes.get("output.value")
    common: dict[str, Any] = dict(source_ref=f"span:{span.span_id}", latency_ms=span.latency_ms)
    if span.status.upper() == "ERROR":
        return ErrorStep(error_type="tool_error", message=span.status_message, tool_name=name, args=args,
                         observation=output if isinstance(output, str) else None, **common)
    action = ctx.action(name)
    answer = None
    if action == "final":  # smolagents passes final_answer(x) as {"args": [x]} or {"kwargs": {"answer": x}}
        positional = args.get("args")
        kwargs = found if isinstance(found := args.get("kwargs"), dict) else {}
        value = positional[0] if isinstance(positional, list) and positional else kwargs.get("answer")
        answer = value if isinstance(value, str) else (None if value is None else json.dumps(value))
    return make_step(action, tool_name=name, args=args, observation=output if isinstance(output, str) else None,
                     answer=answer, **common)


def _item(spans: list[_Span]) -> dict[str, Any]:
    """The benchmark item a harness logged as a function argument (SWE-bench: instance_id, problem_statement)."""
    for span in spans:
        for log in span.logs:
            body = log.get("body") if isinstance(log, dict) else None
            args = body.get("function.arguments") if isinstance(body, dict) else None
            item = args.get("item") if isinstance(args, dict) else None
            if isinstance(item, dict):
                return item
    return {}


def _task(spans: list[_Span]) -> str | None:
    for span in spans:
        if span.kind == "AGENT":
            value = _json(span, "input.value")
            if isinstance(value, dict) and isinstance(value.get("task"), str):
                return value["task"]
    for span in spans:
        if span.kind == "LLM":
            for i in range(0, 8):
                if span.attributes.get(f"llm.input_messages.{i}.message.role") == "user":
                    content = span.attributes.get(f"llm.input_messages.{i}.message.content")
                    return content if isinstance(content, str) else None
    return None


def _trace(ctx: ImportContext, document: Any, where: Where) -> Trajectory:
    document = need_object(document, where)
    trace_id = document.get("trace_id")
    if not isinstance(trace_id, str) or not trace_id:
        raise where.error("missing trace id", "trace_id")
    spans: list[_Span] = []
    for i, root in enumerate(need_list(document.get("spans"), where.at("spans"))):
        _walk(root, where.at("spans").at(i), spans)
    by_id: dict[str, _Span] = {}
    for span in list(spans):
        first = by_id.setdefault(span.span_id, span)
        if first is span:
            continue
        # Exports repeat a span now and then (a child listed twice); the same span is counted once.
        if (first.name, first.start, first.attributes) != (span.name, span.start, span.attributes):
            raise span.where.error(f"span {span.span_id} appears twice with different content "
                                   f"(first at {first.where.prefix})", "span_id")
        spans.remove(span)
        ctx.notes.duplicates.append(f"{ctx.path.name}: span {span.span_id} listed twice, identical; read once")
    spans.sort(key=lambda s: (s.start is None, s.start or datetime.min.replace(tzinfo=UTC)))
    steps: list[Step] = []
    for span in spans:
        if span.kind == "LLM":
            parent = by_id.get(span.parent_id) if span.parent_id else None
            steps.append(_llm_step(span, parent if parent is not None and parent.kind == "CHAIN" else None))
        elif span.kind == "TOOL":
            steps.append(_tool_step(ctx, span))
    item = _item(spans)
    source_id = item.get("instance_id") if isinstance(item.get("instance_id"), str) else trace_id
    text = item.get("problem_statement") if isinstance(item.get("problem_statement"), str) else _task(spans)
    question = ctx.question(where, source_id=source_id, text=text)
    agent = next((s for s in spans if s.kind == "AGENT"), None)
    model = next((s.attributes["llm.model_name"] for s in spans
                  if isinstance(s.attributes.get("llm.model_name"), str)), None)
    error = agent.status_message or "error" if agent is not None and agent.status.upper() == "ERROR" else None
    metadata: dict[str, Any] = {"trace_id": trace_id, "span_count": len(spans)}
    for key in ("repo", "base_commit", "instance_id"):
        if isinstance(item.get(key), str):
            metadata[key] = item[key]
    started = spans[0].start if spans and spans[0].start else None
    return assemble(ctx, run=ctx.run(model=model), question=question, steps=steps,
                    end_reason="error" if error else None, error=error, metadata=metadata,
                    started_at=started.isoformat().replace("+00:00", "Z") if started else None)


def import_trail(ctx: ImportContext) -> Iterator[Trajectory]:
    """One trajectory per `{trace_id, spans}` document (a file, or a JSONL of them)."""
    for line, document in iter_whole_documents(ctx.path):
        yield _trace(ctx, document, ctx.where(line))
