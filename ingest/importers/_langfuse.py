"""Langfuse traces with their observations: the app's export (`{"trace", "observations"}`), public-API traces
(`observations` inside the trace, or `{"data": [...]}` pages) and flat observation lists (grouped by `traceId`).

Tool executions are TOOL and RETRIEVER observations, and SPANs named as a tool an LLM call requested; the answer
is the text of the last-ending GENERATION that requests no tool. Inputs and outputs are decoded from JSON text,
however often it was encoded.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

from trajscope.format import Step, Trajectory

from ._actions import make_step, parse_arguments
from ._chat import chat_action
from ._context import ImportContext, assemble
from ._fields import Where, as_text, need_list, need_object
from ._json_stream import iter_records
from ._llm_payloads import deep_decode, output_text, tool_requests, user_text
from ._traced_tools import traced_tool_step

LANGFUSE_NOTES = {"gold_answers": "a Langfuse trace holds a gold answer only as metadata `gold_answer`",
                  "gold_passages": "Langfuse traces carry no gold passages"}
_TOOL_TYPES = frozenset({"TOOL", "RETRIEVER"})
_ANSWER_KEYS = ("gold_answer", "expected_output", "expectedOutput")


class _Observation:
    """One observation with its fields decoded (the app export writes `None` and reprs as text)."""

    def __init__(self, raw: Any, where: Where):
        raw = need_object(raw, where)
        self.where = where
        self.raw = raw
        self._decoded: dict[str, Any] = {}
        self.id = self.text("id")
        if self.id is None:
            raise where.error("missing observation id", "id")
        self.type = (self.text("type") or "SPAN").upper()
        self.name = self.text("name") or ""
        self.parent = self.text("parentObservationId")
        self.start = self.text("startTime") or ""
        self.end = self.text("endTime") or self.start
        self.level = self.text("level")

    def text(self, key: str) -> str | None:
        value = deep_decode(self.raw.get(key), self.where.at(key))
        if value is None or isinstance(value, str):
            return value
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return str(value)
        raise self.where.error(f"expected a string, got {type(value).__name__}", key)

    def value(self, key: str) -> Any:
        if key not in self._decoded:  # outputs are read several times; decoding (maybe twice-encoded) once
            self._decoded[key] = deep_decode(self.raw.get(key), self.where.at(key))
        return self._decoded[key]


def _usage(obs: _Observation) -> tuple[int, int]:
    usage = obs.value("usageDetails") or obs.value("usage") or {}
    if not isinstance(usage, dict):
        return 0, 0
    pick = lambda *keys: next((int(usage[k]) for k in keys if isinstance(usage.get(k), (int, float))), 0)  # noqa: E731
    return pick("input", "promptTokens", "input_tokens"), pick("output", "completionTokens", "output_tokens")


def _result_text(output: Any) -> str | None:
    if isinstance(output, dict) and isinstance(output.get("content"), str):  # a LangChain ToolMessage
        return output["content"]
    return as_text(output)


def _tool_step(ctx: ImportContext, obs: _Observation, thought: str | None) -> Step:
    raw_args = obs.value("input")
    args = raw_args if isinstance(raw_args, dict) else parse_arguments(raw_args, obs.where.at("input"))
    observation = _result_text(obs.value("output"))
    error = (obs.text("statusMessage") or "error") if obs.level == "ERROR" else None
    return traced_tool_step(ctx, name=obs.name or None, args=args, observation=observation,
                            result=deep_decode(observation, obs.where.at("output")), retriever=obs.type == "RETRIEVER",
                            error=error, thought=thought, source_ref=f"observation:{obs.id}")


def _has_generation_ancestor(obs: _Observation, by_id: dict[str | None, _Observation]) -> bool:
    seen: set[str] = set()
    cur = obs.parent
    while cur is not None and cur in by_id and cur not in seen:
        seen.add(cur)
        if by_id[cur].type == "GENERATION":
            return True
        cur = by_id[cur].parent
    return False


def _trajectory(ctx: ImportContext, trace: dict[str, Any], raw_obs: list[tuple[Any, Where]],
                where: Where) -> Trajectory:
    observations = sorted((_Observation(o, at) for o, at in raw_obs), key=lambda o: o.start)
    by_id = {o.id: o for o in observations}
    generations = [o for o in observations if o.type == "GENERATION"]
    requested = {o.id: tool_requests(o.value("output")) for o in generations}
    names = {name for calls in requested.values() for _, name, _ in calls}
    steps: list[Step] = []
    thought: str | None = None
    executed = {o.id for o in observations if o.type in _TOOL_TYPES or (o.type == "SPAN" and o.name in names)}
    for obs in observations:
        if obs.type == "GENERATION" and requested[obs.id]:
            thought = (output_text(obs.value("output")) or "").strip() or None
            if not executed:  # only the LLM calls were traced: each requested call is a step
                for k, (_, name, args) in enumerate(requested[obs.id]):
                    at = obs.where.at("output")
                    steps.append(make_step(chat_action(ctx, name), tool_name=name, args=parse_arguments(args, at),
                                           thought=thought if k == 0 else None, source_ref=f"observation:{obs.id}"))
                thought = None
        elif obs.id in executed:
            steps.append(_tool_step(ctx, obs, thought))
            thought = None
    answers = [o for o in generations if not requested[o.id] and (output_text(o.value("output")) or "").strip()]
    answers.sort(key=lambda o: o.end)
    output = deep_decode(trace.get("output"), where.at("output"))
    if answers:
        last = answers[-1]
        steps.append(make_step("final", tool_name=None, args={}, answer=output_text(last.value("output")),
                               source_ref=f"observation:{last.id}"))
    elif not observations and (text := output_text(output)):  # a trace listed without its observations
        steps.append(make_step("final", tool_name=None, args={}, answer=text))
    trace_id = trace.get("id")
    if not isinstance(trace_id, str) or not trace_id:
        raise where.error("missing trace id", "id")
    metadata = deep_decode(trace.get("metadata"), where.at("metadata"))
    metadata = metadata if isinstance(metadata, dict) else {}
    # The trace's input, else the root observation's (an agent's input), else an LLM call's first user message.
    roots = [o for o in observations if o.parent is None or o.parent not in by_id]
    trace_input = deep_decode(trace.get("input"), where.at("input"))
    question_text = user_text(trace_input) or (trace_input.strip() or None if isinstance(trace_input, str) else None) \
        or next(
        (t for o in (*roots, *generations, *observations) if (t := user_text(o.value("input")))), None)
    if question_text is None:
        question_text = f"(question text not captured: trace {trace_id})"
    gold = next((metadata[k] for k in _ANSWER_KEYS if isinstance(metadata.get(k), str)), None)
    sid = metadata.get("question_id")
    question = ctx.question(where, source_id=str(sid) if sid is not None else trace_id, text=question_text, gold=gold)
    top = [o for o in generations if not _has_generation_ancestor(o, by_id)]
    tokens = [_usage(o) for o in top]
    scores = deep_decode(trace.get("scores"), where.at("scores"))
    extra: dict[str, Any] = {"trace_id": trace_id, "observations": dict(Counter(o.type for o in observations))}
    if isinstance(scores, list) and scores:
        extra["scores"] = {s["name"]: s.get("value") for s in scores if isinstance(s, dict) and "name" in s}
    if isinstance(trace_name := trace.get("name"), str):
        extra["trace_name"] = trace_name
    model = next((m for o in generations if (m := o.text("model"))), None)
    errors = [o for o in observations if o.level == "ERROR" and o.parent is None]
    return assemble(ctx, run=ctx.run(model=model), question=question, steps=steps,
                    started_at=(observations[0].start if observations else None) or trace.get("timestamp"),
                    finished_at=max((o.end for o in observations), default=None) or None,
                    total_tokens_in=sum(t[0] for t in tokens) if tokens else None,
                    total_tokens_out=sum(t[1] for t in tokens) if tokens else None,
                    end_reason="error" if errors else None,
                    error=errors[0].text("statusMessage") if errors else None, metadata=extra)


def _located(items: list[Any], where: Where) -> list[tuple[Any, Where]]:
    return [(item, where.at(i)) for i, item in enumerate(items)]


def import_langfuse(ctx: ImportContext) -> Iterator[Trajectory]:
    """One trajectory per trace; loose observations are grouped by their `traceId` at the end of the file."""
    loose: dict[str, list[tuple[Any, Where]]] = {}
    for line, key, value in iter_records(ctx.path, frozenset({"data"})):
        page = value.get("data") if isinstance(value, dict) and key is None else None
        items = [(ctx.where(line, f"data[{i}]"), item) for i, item in enumerate(page)] if isinstance(page, list) \
            else [(ctx.where(line, key or ""), value)]  # a one-line `{"data": [...]}` page, or one record
        for where, record in items:
            record = need_object(record, where)
            if isinstance(record.get("trace"), (dict, str)):  # the app's export
                trace = need_object(deep_decode(record["trace"], where.at("trace")), where.at("trace"))
                observations = need_list(deep_decode(record.get("observations") or [], where.at("observations")),
                                         where.at("observations"))
                yield _trajectory(ctx, trace, _located(observations, where.at("observations")), where.at("trace"))
            elif "traceId" in record and "type" in record:  # one observation of a flat list
                loose.setdefault(str(record["traceId"]), []).append((record, where))
            else:  # a public-API trace (its observations inside it, as objects, or only their ids)
                observations = deep_decode(record.get("observations"), where.at("observations")) or []
                observations = need_list(observations, where.at("observations"))
                observations = [o for o in observations if not isinstance(o, str)]  # ids only: nothing to read
                yield _trajectory(ctx, record, _located(observations, where.at("observations")), where)
    for trace_id, items in loose.items():
        yield _trajectory(ctx, {"id": trace_id}, items, items[0][1])
