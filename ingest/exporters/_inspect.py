"""Inspect AI eval log export (`.json`, log version 2): one sample per trajectory, verdicts as scores."""
from __future__ import annotations

from typing import Any

from trajscope.format import EXPORT_KEY, ErrorStep, Exported, FinalStep, encode_exported, step_kind

from ..importers import SCORER_JUDGES
from ._values import step_input, step_output

# trajscope judge -> the Inspect scorer whose verdict it is: the importer's table read backwards (its
# first scorer per judge), so that the two directions cannot drift apart.
JUDGE_SCORERS: dict[str, str] = {}
for _scorer, _judge in SCORER_JUDGES.items():
    JUDGE_SCORERS.setdefault(_judge, _scorer)
_TOOL_KINDS = {"search", "keyword_search", "semantic_search", "read", "tool", "final"}
_NO_TIME = "2000-01-01T00:00:00+00:00"


def _messages(record: Exported) -> list[dict[str, Any]]:
    t = record.trajectory
    messages: list[dict[str, Any]] = [{"role": "user", "content": t.question.text}]
    for i, step in enumerate(t.steps):
        kind = step_kind(step)
        if isinstance(step, FinalStep) and step.tool_name is None:
            messages.append({"role": "assistant", "content": step.answer or "", "model": t.run.model})
        elif kind in _TOOL_KINDS or (isinstance(step, ErrorStep) and step.tool_name):
            call_id = f"call_{i}"
            messages.append({"role": "assistant", "content": step.thought or "", "model": t.run.model,
                             "tool_calls": [{"id": call_id, "function": step.tool_name or kind,
                                             "arguments": step.args, "type": "function"}]})
            tool: dict[str, Any] = {"role": "tool", "tool_call_id": call_id, "function": step.tool_name or kind,
                                    "content": step_output(step) or ""}
            if isinstance(step, ErrorStep):
                tool["error"] = {"type": "unknown", "message": step.message or step.error_type}
            messages.append(tool)
        else:  # the environment's own step, as the agent was told it
            messages.append({"role": "user", "content": f"[{kind}] {step_output(step) or ''}".strip(),
                             "metadata": {"trajscope_kind": kind, "input": step_input(step)}})
    return messages


def _scores(record: Exported) -> dict[str, Any]:
    scores: dict[str, Any] = {}
    for j in record.trajectory.judgments:  # oldest first: the newest verdict per scorer wins, as in the views
        score: dict[str, Any] = {"value": j.score, "answer": record.trajectory.final_answer}
        if j.rationale:
            score["explanation"] = j.rationale
        if j.judge_model:
            score["metadata"] = {"judge_model": j.judge_model}
        scores[JUDGE_SCORERS[j.judge]] = score
    return scores


def inspect_sample(record: Exported) -> dict[str, Any]:
    """One trajectory as an Inspect EvalSample."""
    t = record.trajectory
    tokens = {"input_tokens": sum(s.tokens_in or 0 for s in t.steps),
              "output_tokens": sum(s.tokens_out or 0 for s in t.steps)}
    tokens["total_tokens"] = tokens["input_tokens"] + tokens["output_tokens"]
    model = t.run.model or "unknown"
    sample: dict[str, Any] = {
        "id": t.question.question_id, "epoch": 1, "input": t.question.text,
        "target": [g for g in [t.question.gold_answer, *t.question.aliases] if g] or "",
        "messages": _messages(record),
        "output": {"model": model, "choices": [{"message": {"role": "assistant", "content": t.final_answer or ""},
                                                "stop_reason": "stop"}],
                   "completion": t.final_answer or ""},
        "scores": _scores(record),
        "metadata": {"trajectory_id": t.trajectory_id, "labels": record.labels, EXPORT_KEY: encode_exported(record)},
        "store": {}, "events": [],
        "model_usage": {model: tokens},
    }
    if t.total_latency_ms is not None:
        sample["total_time"] = t.total_latency_ms / 1000.0
    if t.started_at:
        sample["started_at"] = t.started_at
    if t.finished_at:
        sample["completed_at"] = t.finished_at
    if t.end_reason == "error" or t.error:
        sample["error"] = {"message": t.error or "error", "traceback": "", "traceback_ansi": ""}
    return sample


def inspect_log(records: list[Exported], version: str) -> dict[str, Any]:
    """An Inspect eval log holding one run's trajectories as samples."""
    run = records[0].trajectory.run if records else None
    created = (run.started_at if run else None) or next(
        (r.trajectory.started_at for r in records if r.trajectory.started_at), None) or _NO_TIME
    task = "/".join(p for p in ("trajscope", run and run.controller, run and run.condition) if p)
    return {
        "version": 2, "status": "success",
        "eval": {"eval_id": run.run_id if run else "empty", "run_id": run.run_id if run else "empty",
                 "created": created, "task": task, "task_id": run.run_id if run else "empty", "task_version": 0,
                 "dataset": {"name": (run.dataset if run else None) or "trajscope", "samples": len(records),
                             "sample_ids": [r.trajectory.question.question_id for r in records]},
                 "model": (run.model if run else None) or "unknown", "config": {},
                 "packages": {"trajscope": version},
                 "metadata": {"trajscope_run_id": run.run_id if run else None}},
        "plan": {"name": "plan", "steps": [], "config": {}},
        "results": {"total_samples": len(records), "completed_samples": len(records), "scores": []},
        "stats": {"started_at": created, "completed_at": created, "model_usage": {}},
        "samples": [inspect_sample(r) for r in records],
    }
