"""Accumulates the steps and register events of one episode and seals them into a Trajectory."""
from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from trajscope.format import (
    ErrorStep,
    Question,
    RegisterEvent,
    Run,
    StepBase,
    Trajectory,
    make_trajectory_id,
)


def utc_now_iso() -> str:
    """The current time as ISO 8601 UTC with a trailing Z."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def completion_raw_text(completion: Any) -> str:
    """What the model emitted: its text, or its text and tool calls as JSON."""
    text = getattr(completion, "text", None) or ""
    calls = list(getattr(completion, "tool_calls", None) or [])
    if not calls:
        return text
    return json.dumps(
        {
            "content": text or None,
            "tool_calls": [
                {"name": getattr(c, "name", None), "arguments": getattr(c, "arguments", None)}
                for c in calls
            ],
        },
        ensure_ascii=False,
        default=str,
    )


def charge(step: StepBase, completion: Any | None, *, with_raw: bool = True) -> StepBase:
    """Copy the accounting of the completion that produced `step` onto it; returns the step."""
    if completion is None:
        return step
    step.tokens_in = getattr(completion, "tokens_in", None)
    step.tokens_out = getattr(completion, "tokens_out", None)
    step.latency_ms = getattr(completion, "latency_ms", None)
    step.cost_usd = getattr(completion, "cost_usd", None)
    step.cached = getattr(completion, "cached", None)
    if with_raw and step.raw is None:
        step.raw = completion_raw_text(completion)
    return step


class TrajectoryRecorder:
    """The growing record of one (run, question) episode."""

    def __init__(self, run: Run, question: Question):
        self.run = run
        self.question = question
        self.steps: list[StepBase] = []
        self.register_events: list[RegisterEvent] = []
        self.metadata: dict[str, Any] = {}
        self.started_at = utc_now_iso()

    def add(self, step: StepBase, completion: Any | None = None) -> int:
        """Append a step (charged with `completion` if given); returns its index."""
        self.steps.append(charge(step, completion))
        return len(self.steps) - 1

    @property
    def next_index(self) -> int:
        """The index the next appended step will get."""
        return len(self.steps)

    def add_error(self, error_type: str, message: str, completion: Any | None = None,
                  observation: str | None = None, args: dict[str, Any] | None = None) -> int:
        """Append an ErrorStep."""
        return self.add(
            ErrorStep(error_type=error_type, message=message, observation=observation, args=args or {}), completion
        )

    def add_answer(self, step: StepBase, completion: Any, problem: str | None) -> int:
        """Append an answer step; an answer that had to be salvaged is preceded by an ErrorStep saying why."""
        if problem:
            self.add(ErrorStep(error_type="malformed_answer", message=problem,
                               raw=completion_raw_text(completion)))
        return self.add(step, completion)

    def finish(self, *, final_answer: str | None, end_reason: str,
               error: str | None = None) -> Trajectory:
        """Seal the episode into its canonical Trajectory."""
        return Trajectory(
            trajectory_id=make_trajectory_id(self.run.run_id, self.question.question_id),
            run=self.run,
            question=self.question,
            steps=list(self.steps),  # type: ignore[arg-type]
            register_events=list(self.register_events),
            final_answer=final_answer,
            end_reason=end_reason,  # type: ignore[arg-type]
            error=error,
            started_at=self.started_at,
            finished_at=utc_now_iso(),
            metadata=dict(self.metadata),
        )
