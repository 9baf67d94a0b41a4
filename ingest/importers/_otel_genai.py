"""OpenTelemetry GenAI semantic-convention spans in OTLP JSON (`gen_ai.operation.name`)."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from trajscope.format import Trajectory

from ._context import ImportContext
from ._fields import as_text
from ._span_source import RawSpan
from ._trace_assembly import Document, SpanView, import_traces, json_attribute

_ROLES = {"chat": "llm", "text_completion": "llm", "generate_content": "llm", "execute_tool": "tool",
          "retrieval": "retriever", "invoke_agent": "agent"}


# Where a question id / gold answer set by the instrumenting code is looked for (e.g. `rag.question_id`).
_CUSTOM_PREFIXES = ("", "rag.", "trajscope.", "metadata.")


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _message_text(message: Any) -> str | None:
    if not isinstance(message, dict):
        return None
    parts = message.get("parts")
    if isinstance(parts, list):
        texts = [p["content"] for p in parts if isinstance(p, dict) and p.get("type") == "text"
                 and isinstance(p.get("content"), str)]
        return "\n".join(texts) or None
    return message.get("content") if isinstance(message.get("content"), str) else None


def _has_tool_call(message: Any) -> bool:
    parts = message.get("parts") if isinstance(message, dict) else None
    return isinstance(parts, list) and any(isinstance(p, dict) and p.get("type") == "tool_call" for p in parts)


def _documents(span: RawSpan) -> list[Document]:
    docs = json_attribute(span, "gen_ai.retrieval.documents")
    if not isinstance(docs, list):
        return []
    out = []
    for d in docs:
        if isinstance(d, dict):
            score = d.get("score")
            number = float(score) if isinstance(score, (int, float)) and not isinstance(score, bool) else None
            out.append(Document(doc_id=None if d.get("id") is None else str(d["id"]),
                                content=as_text(d.get("content")), score=number))
    return out


def interpret(span: RawSpan) -> SpanView:
    """Read GenAI semantic-convention attributes of one span."""
    a = span.attributes
    view = SpanView(raw=span, role=_ROLES.get(str(a.get("gen_ai.operation.name") or ""), "other"))
    for key in ("question_id", "gold_answer"):  # the conventions have no such keys: custom attributes
        value = next((a[p + key] for p in _CUSTOM_PREFIXES if a.get(p + key) is not None), None)
        if value is not None:
            view.metadata[key] = value
    inputs = json_attribute(span, "gen_ai.input.messages")
    outputs = json_attribute(span, "gen_ai.output.messages")
    first_user = next((m for m in inputs if isinstance(m, dict) and m.get("role") == "user"), None) \
        if isinstance(inputs, list) else None
    last_out = outputs[-1] if isinstance(outputs, list) and outputs else None
    if view.role == "llm":
        view.tokens_in = _int(a.get("gen_ai.usage.input_tokens", a.get("gen_ai.usage.prompt_tokens")))
        view.tokens_out = _int(a.get("gen_ai.usage.output_tokens", a.get("gen_ai.usage.completion_tokens")))
        model = a.get("gen_ai.response.model") or a.get("gen_ai.request.model")
        view.model = model if isinstance(model, str) else None
        view.input_text = _message_text(first_user)
        view.output_text = _message_text(last_out)
        view.output_has_tool_calls = _has_tool_call(last_out)
    elif view.role == "tool":
        name = a.get("gen_ai.tool.name")
        view.tool_name = name if isinstance(name, str) else (span.name or None)
        args = json_attribute(span, "gen_ai.tool.call.arguments")
        view.args = args if isinstance(args, dict) else ({} if args is None else {"input": args})
        view.result = as_text(json_attribute(span, "gen_ai.tool.call.result"))
    elif view.role == "retriever":
        view.query = as_text(a.get("gen_ai.retrieval.query.text"))
        view.documents = _documents(span)
    elif view.role == "agent":
        view.input_text = _message_text(first_user)
        view.output_text = _message_text(last_out)
        if view.input_text is None:  # content capture off: the instrumenting code may name the question
            question = next((a[p + "question"] for p in _CUSTOM_PREFIXES[1:] if isinstance(a.get(p + "question"), str)),
                            None)
            view.input_text = question
    return view


def import_otel_genai(ctx: ImportContext) -> Iterator[Trajectory]:
    """One trajectory per trace."""
    return import_traces(ctx, interpret)
