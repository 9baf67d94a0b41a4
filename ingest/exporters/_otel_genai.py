"""OTel GenAI export: OTLP JSON spans following the OpenTelemetry GenAI semantic conventions (`gen_ai.*`).

The conventions name no question id, gold answer or verdict: those go under `trajscope.*` attributes,
where the importer (and a peer's filter) looks for them.
"""
from __future__ import annotations

from typing import Any

from trajscope.format import EXPORT_KEY, Exported, encode_exported

from ._spans import SpanPlan, json_text, otlp_request, plan_spans
from ._values import step_input, step_output

_OPERATIONS = {"agent": "invoke_agent", "llm": "chat", "tool": "execute_tool", "retriever": "retrieval"}


def _text_message(role: str, text: str | None, tool_call: str | None = None,
                  arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    parts: list[dict[str, Any]] = [{"type": "text", "content": text}] if text else []
    if tool_call is not None:
        parts.append({"type": "tool_call", "name": tool_call, "arguments": arguments or {}})
    return {"role": role, "parts": parts}


def _attributes(record: Exported, span: SpanPlan) -> dict[str, Any]:
    t = record.trajectory
    a: dict[str, Any] = {}
    if span.role in _OPERATIONS:
        a["gen_ai.operation.name"] = _OPERATIONS[span.role]
    step = span.step
    if span.role == "agent":
        a["gen_ai.agent.name"] = t.run.controller
        a["gen_ai.request.model"] = t.run.model
        a["gen_ai.conversation.id"] = t.trajectory_id
        a["gen_ai.input.messages"] = json_text([_text_message("user", t.question.text)])
        a["gen_ai.output.messages"] = json_text([_text_message("assistant", t.final_answer)])
        a["trajscope.question_id"] = t.question.question_id
        a["trajscope.gold_answer"] = t.question.gold_answer
        a["trajscope.run_id"] = t.run.run_id
        for j in t.judgments:
            a[f"trajscope.judgment.{j.judge}" + (f".{j.judge_model}" if j.judge_model else "")] = j.score
        for name, value in record.labels.items():
            a[f"trajscope.label.{name}"] = value
        a[EXPORT_KEY] = encode_exported(record)
    elif span.role == "llm" and step is not None:
        a["gen_ai.request.model"] = t.run.model
        a["gen_ai.usage.input_tokens"] = step.tokens_in
        a["gen_ai.usage.output_tokens"] = step.tokens_out
        a["gen_ai.input.messages"] = json_text([_text_message("user", t.question.text)])
        a["gen_ai.output.messages"] = json_text([_text_message("assistant", span.text, span.tool_call, step.args)])
        a["trajscope.cost_usd"] = step.cost_usd
    elif span.role in ("tool", "chain") and step is not None:
        if span.role == "tool":
            a["gen_ai.tool.name"] = span.name
            a["gen_ai.tool.type"] = "function"
        a["gen_ai.tool.call.arguments"] = json_text(step_input(step))
        a["gen_ai.tool.call.result"] = step_output(step)
    elif span.role == "retriever":
        a["gen_ai.retrieval.query.text"] = span.query
        a["gen_ai.retrieval.documents"] = json_text(
            [{k: v for k, v in (("id", d.doc_id), ("content", d.content), ("score", d.score)) if v is not None}
             for d in span.docs])
    return a


def otel_genai_request(record: Exported, version: str) -> dict[str, Any]:
    """One trajectory as an OTLP JSON request of GenAI spans."""
    return otlp_request(record, plan_spans(record), lambda span: _attributes(record, span),
                        scope="trajscope.export.otel_genai", version=version)
