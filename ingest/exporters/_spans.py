"""A trajectory laid out as a span tree (agent root, model calls, tool calls, retrievals) and its OTLP JSON encoding.

Shared by the OpenInference and OTel GenAI exports: the tree is the same, the attribute names differ.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TypeGuard

from trajscope.format import (
    SEARCH_KINDS,
    ContextInjectionStep,
    ErrorStep,
    Exported,
    FinalStep,
    ReadStep,
    SearchStep,
    Step,
    StepBase,
    step_kind,
)

# When a trajectory records no start time, its spans start here (a fixed instant keeps exports reproducible).
_NO_TIME = datetime(2000, 1, 1, tzinfo=UTC)
_TICK_NS = 1_000  # the gap between consecutive spans, so that start order is step order


@dataclass
class Doc:
    """A retrieved or read document: id, text, score."""

    doc_id: str
    content: str | None
    score: float | None = None


@dataclass
class SpanPlan:
    """One span of the tree, before any convention names its attributes."""

    role: str  # agent | llm | tool | retriever | chain
    name: str
    start_ns: int
    end_ns: int
    parent: int | None  # index of the parent span in the plan
    step: Step | None = None
    error: str | None = None
    # llm: the text the model produced and the tool it called; retriever: query and documents
    text: str | None = None
    tool_call: str | None = None
    query: str | None = None
    docs: list[Doc] = field(default_factory=list)


def _ns(stamp: str | None) -> int | None:
    if not stamp:
        return None
    try:
        parsed = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    parsed = parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    return int(parsed.timestamp() * 1_000_000) * 1000


def _spent(step: StepBase) -> bool:
    """The step was decided by a model call whose usage or reasoning the log recorded."""
    return any(v is not None for v in (step.tokens_in, step.tokens_out, step.cost_usd)) or bool(step.thought)


def _answers_without_tool(step: Step) -> TypeGuard[FinalStep]:
    # A final that no tool call carried (direct answer, vanilla RAG): the model's reply is the answer.
    return isinstance(step, FinalStep) and step.tool_name is None


def plan_spans(record: Exported) -> list[SpanPlan]:
    """The span tree of one trajectory: root first, then per step an LLM span (when it spent) and its span."""
    t = record.trajectory
    start = _ns(t.started_at) or _ns(t.run.started_at) or int(_NO_TIME.timestamp()) * 1_000_000_000
    plan = [SpanPlan(role="agent", name=t.run.controller or "agent", start_ns=start, end_ns=start, parent=None,
                     error=t.error if t.end_reason == "error" else None)]
    cursor = start + _TICK_NS
    for step in t.steps:
        kind = step_kind(step)
        duration = round(step.latency_ms * 1_000_000) if step.latency_ms else 0
        if _answers_without_tool(step):
            plan.append(SpanPlan(role="llm", name="final", start_ns=cursor, end_ns=cursor + duration, parent=0,
                                 step=step, text=step.answer))
            cursor += duration + _TICK_NS
            continue
        if _spent(step):
            plan.append(SpanPlan(role="llm", name="llm", start_ns=cursor, end_ns=cursor + _TICK_NS // 2, parent=0,
                                 step=step, text=step.thought, tool_call=step.tool_name or kind))
            cursor += _TICK_NS
        name = step.tool_name or kind
        if kind in SEARCH_KINDS or isinstance(step, ReadStep) or kind in ("tool", "final") or (
                isinstance(step, ErrorStep) and step.tool_name):
            span = SpanPlan(role="tool", name=name, start_ns=cursor, end_ns=cursor + duration, parent=0, step=step,
                            error=step.message or step.error_type if isinstance(step, ErrorStep) else None)
        else:  # the environment's own steps (gate, injection, register, nudge, forced answer, model error)
            span = SpanPlan(role="chain", name=f"trajscope.{kind}", start_ns=cursor, end_ns=cursor + duration,
                            parent=0, step=step,
                            error=step.message or step.error_type if isinstance(step, ErrorStep) else None)
        plan.append(span)
        index = len(plan) - 1
        if isinstance(step, SearchStep):
            plan.append(SpanPlan(role="retriever", name=f"{name}.retrieve", start_ns=cursor + 1,
                                 end_ns=max(cursor + 1, cursor + duration), parent=index, step=step, query=step.query,
                                 docs=[Doc(c.chunk_id, c.snippet, c.score) for c in step.candidates]))
        elif isinstance(step, (ReadStep, ContextInjectionStep)) and step.passages and span.role == "tool":
            plan.append(SpanPlan(role="retriever", name=f"{name}.passages", start_ns=cursor + 1,
                                 end_ns=max(cursor + 1, cursor + duration), parent=index, step=step,
                                 docs=[Doc(p.chunk_id, p.text) for p in step.passages]))
        cursor += duration + _TICK_NS
    plan[0].end_ns = cursor
    return plan


def trace_id(trajectory_id: str) -> str:
    """A deterministic 16-byte trace id (hex) for a trajectory."""
    return hashlib.sha256(trajectory_id.encode("utf-8")).hexdigest()[:32]


def span_id(trajectory_id: str, index: int) -> str:
    """A deterministic 8-byte span id (hex)."""
    return hashlib.sha256(f"{trajectory_id}/{index}".encode()).hexdigest()[:16]


def json_text(value: Any) -> str:
    """Compact JSON text of a value (attribute values that hold objects)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def any_value(value: Any) -> dict[str, Any]:
    """An OTLP JSON AnyValue (int64 as a string, as the protobuf JSON mapping writes it)."""
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, (list, tuple)):
        return {"arrayValue": {"values": [any_value(v) for v in value]}}
    return {"stringValue": str(value)}


def otlp_request(record: Exported, plan: list[SpanPlan], attributes: Callable[[SpanPlan], dict[str, Any]],
                 *, scope: str, version: str) -> dict[str, Any]:
    """One OTLP ExportTraceServiceRequest (JSON mapping) holding the trajectory's trace."""
    tid = record.trajectory.trajectory_id
    spans = []
    for i, span in enumerate(plan):
        attrs = attributes(span)
        out: dict[str, Any] = {
            "traceId": trace_id(tid), "spanId": span_id(tid, i), "name": span.name, "kind": 1,
            "startTimeUnixNano": str(span.start_ns), "endTimeUnixNano": str(span.end_ns),
            "attributes": [{"key": k, "value": any_value(v)} for k, v in attrs.items() if v is not None],
            "status": {"code": 2, "message": span.error} if span.error else {"code": 1},
        }
        if span.parent is not None:
            out["parentSpanId"] = span_id(tid, span.parent)
        spans.append(out)
    return {"resourceSpans": [{
        "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "trajscope"}}]},
        "scopeSpans": [{"scope": {"name": scope, "version": version}, "spans": spans}],
    }]}
