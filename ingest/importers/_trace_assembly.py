"""One trace of interpreted spans -> one canonical trajectory (shared by OpenInference and OTel GenAI)."""
from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import msgspec

from trajscope.format import EXPORT_KEY, Candidate, ErrorStep, FinalStep, Passage, Step, Trajectory, loads_bounded

from ._actions import SEARCH_ACTIONS, make_step
from ._context import ImportContext, assemble
from ._documents import decoded, documents_of, passages
from ._exported import restore_exported
from ._span_source import RawSpan, iter_spans, iter_traces


@dataclass
class Document:
    """A retrieved document as a span reports it."""

    doc_id: str | None
    content: str | None
    score: float | None


@dataclass
class SpanView:
    """What a span means for a trajectory, whichever convention described it."""

    raw: RawSpan
    role: str  # llm | retriever | tool | agent | other
    tool_name: str | None = None
    args: dict[str, Any] = field(default_factory=dict)
    result: str | None = None
    query: str | None = None
    documents: list[Document] = field(default_factory=list)
    tokens_in: int | None = None
    tokens_out: int | None = None
    cost_usd: float | None = None
    model: str | None = None
    input_text: str | None = None  # the first user message / agent input
    output_text: str | None = None
    output_has_tool_calls: bool = False
    metadata: dict[str, Any] = field(default_factory=dict)


def json_attribute(span: RawSpan, key: str) -> Any:
    """A span attribute, decoded when it is JSON text (under the nesting limit); other values unchanged."""
    value = span.attributes.get(key)
    if isinstance(value, str) and value[:1] in "[{":
        try:
            return loads_bounded(value, path=span.where.path, line=span.where.line,
                                 field=span.where.at(f"attributes.{key}").prefix)
        except json.JSONDecodeError:
            return value
    return value


def _iso(ns: int | None) -> str | None:
    if ns is None:
        return None
    return datetime.fromtimestamp(ns / 1e9, tz=UTC).isoformat().replace("+00:00", "Z")


def _latency(span: RawSpan) -> float | None:
    if span.start_ns is None or span.end_ns is None:
        return None
    return (span.end_ns - span.start_ns) / 1e6


def _descends(span: RawSpan, ancestor: RawSpan, by_id: dict[str, RawSpan]) -> bool:
    seen = set()
    cur = span.parent_id
    while cur is not None and cur not in seen:
        if cur == ancestor.span_id:
            return True
        seen.add(cur)
        cur = by_id[cur].parent_id if cur in by_id else None
    return False


def _candidates(docs: list[Document]) -> list[Candidate]:
    return [Candidate(chunk_id=d.doc_id, rank=i, score=d.score, snippet=d.content)
            for i, d in enumerate(docs, start=1) if d.doc_id is not None]


def _tool_step(ctx: ImportContext, view: SpanView, docs: list[Document]) -> Step:
    span = view.raw
    if span.error is not None:
        return ErrorStep(error_type="tool_error", message=span.error, tool_name=view.tool_name, args=view.args,
                         observation=view.result, latency_ms=_latency(span), source_ref=f"span:{span.span_id}")
    action = ctx.action(view.tool_name)
    extra: dict[str, Any] = {}
    if action in SEARCH_ACTIONS:
        extra["candidates"] = _candidates(docs)
    elif action == "read" and docs:
        extra["passages"] = [Passage(chunk_id=d.doc_id, text=d.content) for d in docs if d.doc_id is not None]
    elif action == "read" and view.result is not None:
        # A read tool's JSON result (`{"chunk_id": ..., "text": ...}`): the passage is its text, not the JSON.
        found = documents_of(decoded(view.result, span.where.at("result")))
        if found:
            extra["chunk_ids"] = [d.doc_id for d in found]
            extra["passages"] = passages(found)
    elif action == "read" and not view.args:
        # Content capture off (OTel GenAI's default): the span says the read succeeded but not what it
        # read. It opened a passage of unrecorded identity, so it is a read, not a failed one.
        call_id = span.attributes.get("gen_ai.tool.call.id") or span.attributes.get("tool_call.id")
        unknown = f"unrecorded:{call_id if isinstance(call_id, str) and call_id else span.span_id}"
        extra["chunk_ids"], extra["passages"] = [unknown], [Passage(chunk_id=unknown)]
    return make_step(action, tool_name=view.tool_name, args=view.args, observation=view.result,
                     latency_ms=_latency(span), source_ref=f"span:{span.span_id}", **extra)


def _retriever_step(ctx: ImportContext, view: SpanView) -> Step:
    action = ctx.action(view.raw.name)
    action = action if action in SEARCH_ACTIONS else "search"
    return make_step(action, tool_name=view.raw.name or None, args={"query": view.query} if view.query else {},
                     query=view.query, candidates=_candidates(view.documents), latency_ms=_latency(view.raw),
                     source_ref=f"span:{view.raw.span_id}")


def trace_trajectory(ctx: ImportContext, views: list[SpanView]) -> Trajectory:
    """Steps in start order; an LLM call's tokens and thought go to the step it decided."""
    views.sort(key=lambda v: (v.raw.start_ns is None, v.raw.start_ns or 0))
    by_id = {v.raw.span_id: v.raw for v in views}
    roots = [v for v in views if v.raw.parent_id is None or v.raw.parent_id not in by_id]
    root = roots[0]
    restored = restore_exported(ctx, root.raw.attributes.get(EXPORT_KEY), root.raw.where.at("attributes"))
    if restored is not None:  # a trace trajscope exported: its attachment is the whole record
        return restored
    consumed: set[str] = set()
    steps: list[Step] = []
    pending: dict[str, Any] = {}
    last_llm: SpanView | None = None
    llm_after_last_step = False
    for view in views:
        if view.role == "llm":
            for key, value in (("tokens_in", view.tokens_in), ("tokens_out", view.tokens_out),
                               ("cost_usd", view.cost_usd)):
                if value is not None:
                    pending[key] = (pending.get(key) or 0) + value
            if view.output_text and view.output_has_tool_calls:
                pending["thought"] = view.output_text
            last_llm, llm_after_last_step = view, True
            continue
        if view.role == "tool":
            docs = [d for r in views if r.role == "retriever" and _descends(r.raw, view.raw, by_id)
                    for d in r.documents]
            consumed.update(r.raw.span_id for r in views if r.role == "retriever" and _descends(r.raw, view.raw, by_id))
            step = _tool_step(ctx, view, docs)
        elif view.role == "retriever" and view.raw.span_id not in consumed:
            step = _retriever_step(ctx, view)
        else:
            continue
        if pending:
            step = msgspec.structs.replace(step, **pending)
            pending = {}
        steps.append(step)
        llm_after_last_step = False
    if not any(isinstance(s, FinalStep) for s in steps):
        if last_llm is not None and llm_after_last_step and last_llm.output_text and not last_llm.output_has_tool_calls:
            pending.pop("thought", None)
            steps.append(make_step("final", tool_name=None, args={}, answer=last_llm.output_text,
                                   source_ref=f"span:{last_llm.raw.span_id}", **pending))
        elif root.role == "agent" and root.output_text:
            steps.append(make_step("final", tool_name=None, args={}, answer=root.output_text,
                                   source_ref=f"span:{root.raw.span_id}"))
    metadata = {k: v for view in views for k, v in view.metadata.items()}
    question_text = root.input_text or next((v.input_text for v in views if v.input_text), None)
    source_id = metadata.pop("question_id", None)
    gold = metadata.pop("gold_answer", None)
    if question_text is None and ctx.questions is None:
        # Content capture off: no span holds the question. The trace still imports (its steps, reads and
        # gold are real); the text says it is missing, and the report says how to join it.
        qid = str(source_id) if source_id is not None else root.raw.trace_id
        question_text = f"(question text not captured: {qid})"
        warning = ("some traces carry no question text (content capture off): their question text is a "
                   "placeholder; pass --questions FILE to join it by question id")
        if warning not in ctx.notes.warnings:
            ctx.notes.warnings.append(warning)
    question = ctx.question(root.raw.where, source_id=str(source_id) if source_id is not None else root.raw.trace_id,
                            text=question_text, gold=gold if isinstance(gold, str) else None)
    model = next((v.model for v in views if v.model), None)
    metadata["trace_id"] = root.raw.trace_id
    return assemble(ctx, run=ctx.run(model=model), question=question, steps=steps,
                    started_at=_iso(root.raw.start_ns), finished_at=_iso(root.raw.end_ns),
                    end_reason="error" if root.raw.error else None, error=root.raw.error, metadata=metadata)


def import_traces(ctx: ImportContext, interpret: Callable[[RawSpan], SpanView]) -> Iterator[Trajectory]:
    """Stream the file's traces, one trajectory each."""
    for trace in iter_traces(iter_spans(ctx)):
        yield trace_trajectory(ctx, [interpret(span) for span in trace])
