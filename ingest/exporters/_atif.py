"""ATIF v1.4 export: a user step with the question, one agent step per tool call, system steps for the environment."""
from __future__ import annotations

from typing import Any

from trajscope.format import EXPORT_KEY, ErrorStep, Exported, FinalStep, SearchStep, encode_exported, step_kind

from ._values import step_input, step_output

ATIF_VERSION = "ATIF-v1.4"
_TOOL_KINDS = {"search", "keyword_search", "semantic_search", "read", "tool", "final"}


def _metrics(step: Any) -> dict[str, Any]:
    out = {"prompt_tokens": step.tokens_in, "completion_tokens": step.tokens_out, "cost_usd": step.cost_usd}
    return {k: v for k, v in out.items() if v is not None}


def atif_document(record: Exported, version: str) -> dict[str, Any]:
    """One trajectory as an ATIF document (question id, gold, verdicts and labels under `extra`)."""
    t = record.trajectory
    steps: list[dict[str, Any]] = [{"step_id": 1, "source": "user", "message": t.question.text}]
    if t.started_at:
        steps[0]["timestamp"] = t.started_at
    for i, step in enumerate(t.steps):
        kind = step_kind(step)
        out: dict[str, Any] = {"step_id": len(steps) + 1}
        metrics = _metrics(step)
        if isinstance(step, FinalStep) and step.tool_name is None:
            out.update(source="agent", model_name=t.run.model, message=step.answer or "")
        elif kind in _TOOL_KINDS or (isinstance(step, ErrorStep) and step.tool_name):
            call_id = f"call_{i}"
            out.update(source="agent", model_name=t.run.model, message="",
                       tool_calls=[{"tool_call_id": call_id, "function_name": step.tool_name or kind,
                                    "arguments": step.args}])
            result = step_output(step)
            if result is not None:
                out["observation"] = {"results": [{"source_call_id": call_id, "content": result}]}
            if isinstance(step, SearchStep) and step.candidates:
                out["extra"] = {"candidates": [c.chunk_id for c in step.candidates]}
        else:  # the environment's own step: what it told the agent
            out.update(source="system", message=step_output(step) or kind,
                       extra={"trajscope_kind": kind, "input": step_input(step)})
        if out["source"] == "agent":
            if step.thought:
                out["reasoning_content"] = step.thought
            if metrics:
                out["metrics"] = metrics
        steps.append(out)
    if t.finished_at:
        steps[-1]["timestamp"] = t.finished_at
    totals = {"total_prompt_tokens": t.total_tokens_in, "total_completion_tokens": t.total_tokens_out,
              "total_cost_usd": t.total_cost_usd, "total_steps": len(steps)}
    return {
        "schema_version": ATIF_VERSION,
        "session_id": t.trajectory_id,
        "agent": {k: v for k, v in (("name", t.run.controller or "trajscope"),
                                    ("version", t.run.code_version or version), ("model_name", t.run.model))
                  if v is not None},
        "steps": steps,
        "final_metrics": {k: v for k, v in totals.items() if v is not None},
        "extra": {"question_id": t.question.question_id, "gold_answer": t.question.gold_answer,
                  "run_id": t.run.run_id, "condition": t.run.condition,
                  "judgments": [{"judge": j.judge, "score": j.score, "judge_model": j.judge_model}
                                for j in t.judgments],
                  "labels": record.labels, EXPORT_KEY: encode_exported(record)},
    }
