"""OpenInference export: OTLP JSON spans named with the `openinference-semantic-conventions` constants."""
from __future__ import annotations

from typing import Any

from openinference.semconv.trace import (
    DocumentAttributes,
    MessageAttributes,
    OpenInferenceMimeTypeValues,
    OpenInferenceSpanKindValues,
    SpanAttributes,
    ToolCallAttributes,
)

from trajscope.format import EXPORT_KEY, Exported, encode_exported

from ._spans import SpanPlan, json_text, otlp_request, plan_spans
from ._values import step_input, step_output

_KINDS = {"agent": OpenInferenceSpanKindValues.AGENT, "llm": OpenInferenceSpanKindValues.LLM,
          "tool": OpenInferenceSpanKindValues.TOOL, "retriever": OpenInferenceSpanKindValues.RETRIEVER,
          "chain": OpenInferenceSpanKindValues.CHAIN}
_JSON = OpenInferenceMimeTypeValues.JSON.value
_TEXT = OpenInferenceMimeTypeValues.TEXT.value


def _message(prefix: str, i: int, role: str, content: str | None) -> dict[str, Any]:
    head = f"{prefix}.{i}."
    return {head + MessageAttributes.MESSAGE_ROLE: role, head + MessageAttributes.MESSAGE_CONTENT: content}


def root_metadata(record: Exported) -> dict[str, Any]:
    """The root span's `metadata` object: question id, gold answer, verdicts and labels (Phoenix filters on these)."""
    t = record.trajectory
    return {"question_id": t.question.question_id, "gold_answer": t.question.gold_answer,
            "trajectory_id": t.trajectory_id, "run_id": t.run.run_id, "dataset": t.question.dataset,
            "controller": t.run.controller, "condition": t.run.condition,
            "judgments": {f"{j.judge}" + (f":{j.judge_model}" if j.judge_model else ""): j.score
                          for j in t.judgments},
            "labels": record.labels}


def _attributes(record: Exported, span: SpanPlan) -> dict[str, Any]:
    t = record.trajectory
    a: dict[str, Any] = {SpanAttributes.OPENINFERENCE_SPAN_KIND: _KINDS[span.role].value}
    step = span.step
    if span.role == "agent":
        a[SpanAttributes.INPUT_VALUE] = t.question.text
        a[SpanAttributes.INPUT_MIME_TYPE] = _TEXT
        a[SpanAttributes.OUTPUT_VALUE] = t.final_answer
        a[SpanAttributes.SESSION_ID] = t.run.run_id
        a[SpanAttributes.AGENT_NAME] = t.run.controller
        a[SpanAttributes.METADATA] = json_text(root_metadata(record))
        a[EXPORT_KEY] = encode_exported(record)
    elif span.role == "llm" and step is not None:
        a[SpanAttributes.LLM_MODEL_NAME] = t.run.model
        a[SpanAttributes.LLM_TOKEN_COUNT_PROMPT] = step.tokens_in
        a[SpanAttributes.LLM_TOKEN_COUNT_COMPLETION] = step.tokens_out
        a[SpanAttributes.LLM_COST_TOTAL] = step.cost_usd
        a.update(_message(SpanAttributes.LLM_INPUT_MESSAGES, 0, "user", t.question.text))
        a.update(_message(SpanAttributes.LLM_OUTPUT_MESSAGES, 0, "assistant", span.text))
        if span.tool_call is not None:
            call = f"{SpanAttributes.LLM_OUTPUT_MESSAGES}.0.{MessageAttributes.MESSAGE_TOOL_CALLS}.0."
            a[call + ToolCallAttributes.TOOL_CALL_FUNCTION_NAME] = span.tool_call
            a[call + ToolCallAttributes.TOOL_CALL_FUNCTION_ARGUMENTS_JSON] = json_text(step.args)
    elif span.role in ("tool", "chain") and step is not None:
        if span.role == "tool":
            a[SpanAttributes.TOOL_NAME] = span.name
        a[SpanAttributes.INPUT_VALUE] = json_text(step_input(step))
        a[SpanAttributes.INPUT_MIME_TYPE] = _JSON
        a[SpanAttributes.OUTPUT_VALUE] = step_output(step)
        a[SpanAttributes.OUTPUT_MIME_TYPE] = _TEXT
    elif span.role == "retriever":
        a[SpanAttributes.INPUT_VALUE] = span.query
        for i, doc in enumerate(span.docs):
            head = f"{SpanAttributes.RETRIEVAL_DOCUMENTS}.{i}."
            a[head + DocumentAttributes.DOCUMENT_ID] = doc.doc_id
            a[head + DocumentAttributes.DOCUMENT_CONTENT] = doc.content
            a[head + DocumentAttributes.DOCUMENT_SCORE] = doc.score
    return a


def openinference_request(record: Exported, version: str) -> dict[str, Any]:
    """One trajectory as an OTLP JSON request of OpenInference spans."""
    return otlp_request(record, plan_spans(record), lambda span: _attributes(record, span),
                        scope="trajscope.export.openinference", version=version)
