"""OpenInference spans (Phoenix JSON / JSONL exports, or OTLP JSON carrying OpenInference attributes)."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from trajscope.format import Trajectory

from ._context import ImportContext
from ._fields import as_text
from ._span_source import RawSpan
from ._trace_assembly import Document, SpanView, import_traces, json_attribute

_ROLES = {"LLM": "llm", "RETRIEVER": "retriever", "TOOL": "tool", "AGENT": "agent", "CHAIN": "agent"}


def _indexed(attrs: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    """`prefix.{i}.rest` keys -> [{rest: value}, ...] in index order."""
    items: dict[int, dict[str, Any]] = {}
    start = len(prefix) + 1
    for key, value in attrs.items():
        if key.startswith(prefix + "."):
            index, _, rest = key[start:].partition(".")
            if index.isdigit():
                items.setdefault(int(index), {})[rest] = value
    return [items[i] for i in sorted(items)]


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def interpret(span: RawSpan) -> SpanView:
    """Read OpenInference semantic-convention attributes of one span."""
    a = span.attributes
    kind = str(a.get("openinference.span.kind") or span.kind or "").upper()
    view = SpanView(raw=span, role=_ROLES.get(kind, "other"))
    meta = json_attribute(span, "metadata")
    if isinstance(meta, dict):
        view.metadata = {k: meta[k] for k in ("question_id", "gold_answer") if meta.get(k) is not None}
    for key in ("question_id", "gold_answer"):  # Phoenix exports metadata as an object: flattened keys
        if a.get(f"metadata.{key}") is not None:
            view.metadata[key] = a[f"metadata.{key}"]
    if view.role == "llm":
        view.tokens_in = _int(a.get("llm.token_count.prompt"))
        view.tokens_out = _int(a.get("llm.token_count.completion"))
        view.cost_usd = _number(a.get("llm.cost.total"))
        view.model = a.get("llm.model_name") if isinstance(a.get("llm.model_name"), str) else None
        inputs = _indexed(a, "llm.input_messages")
        view.input_text = next((m.get("message.content") for m in inputs
                                if m.get("message.role") == "user" and isinstance(m.get("message.content"), str)), None)
        outputs = _indexed(a, "llm.output_messages")
        if outputs:
            content = outputs[-1].get("message.content")
            view.output_text = content if isinstance(content, str) else None
            view.output_has_tool_calls = any(k.startswith("message.tool_calls.") for k in outputs[-1])
    elif view.role == "retriever":
        view.query = as_text(a.get("input.value"))
        view.documents = [Document(doc_id=None if d.get("document.id") is None else str(d["document.id"]),
                                   content=as_text(d.get("document.content")), score=_number(d.get("document.score")))
                          for d in _indexed(a, "retrieval.documents")]
    elif view.role == "tool":
        view.tool_name = a.get("tool.name") if isinstance(a.get("tool.name"), str) else (span.name or None)
        args = json_attribute(span, "input.value")
        view.args = args if isinstance(args, dict) else ({} if args is None else {"input": args})
        view.result = as_text(a.get("output.value"))
    elif view.role == "agent":
        view.input_text = as_text(a.get("input.value"))
        view.output_text = as_text(a.get("output.value"))
    return view


def import_openinference(ctx: ImportContext) -> Iterator[Trajectory]:
    """One trajectory per trace."""
    return import_traces(ctx, interpret)
