"""Turning a controller's result (or its exception) into the canonical trajectory that is logged."""
from __future__ import annotations

import datetime as dt
import traceback
from typing import Any

import msgspec

from trajscope.engine.llm import ModelError
from trajscope.format import (
    MAX_LINE_BYTES,
    ErrorStep,
    Judgment,
    Question,
    Run,
    Trajectory,
    controller_messages,
    has_gold_answer,
    make_trajectory_id,
    score_answer,
)


def utc_now() -> str:
    """ISO 8601 UTC timestamp."""
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def error_type_of(exc: BaseException) -> str:
    """`model_error:<kind>` for model failures, `timeout` for an episode timeout, else the class name."""
    if isinstance(exc, ModelError):
        return f"model_error:{exc.kind}"
    if isinstance(exc, TimeoutError):
        return "episode_timeout"
    return type(exc).__name__


def error_trajectory(run: Run, question: Question, exc: BaseException, started_at: str) -> Trajectory:
    """A recorded failure: one ErrorStep, end_reason "error"; the run goes on."""
    message = str(exc) or type(exc).__name__
    frames = traceback.format_exception(type(exc), exc, exc.__traceback__, limit=-4)
    return Trajectory(
        trajectory_id=make_trajectory_id(run.run_id, question.question_id),
        run=run,
        question=question,
        steps=[ErrorStep(error_type=error_type_of(exc), message=message[:4000])],
        end_reason="error",
        error=f"{error_type_of(exc)}: {message[:1000]}",
        started_at=started_at,
        finished_at=utc_now(),
        metadata={"traceback_tail": "".join(frames)[-2000:]},
    )


# The most bytes one trajectory's log line may take: ingest refuses a line over MAX_LINE_BYTES, and the log's
# redaction may lengthen a line by a quarter (an 8-character key fragment becomes the 10 of "[REDACTED]").
LOG_LINE_BUDGET = MAX_LINE_BYTES * 4 // 5


def oversized_trajectory(trajectory: Trajectory, size: int) -> Trajectory:
    """What is logged instead of a trajectory whose line would pass LOG_LINE_BUDGET: an error naming the limit
    (the steps are dropped; their count and the answer's first characters are kept)."""
    message = (f"the trajectory's log line would be {size / 2**20:,.1f} MB, over the run log's line budget of "
               f"{LOG_LINE_BUDGET / 2**20:,.1f} MB (ingest refuses lines over {MAX_LINE_BYTES / 2**20:,.0f} MB); "
               f"its {len(trajectory.steps)} steps were not kept")
    return Trajectory(
        trajectory_id=trajectory.trajectory_id,
        run=trajectory.run,
        question=trajectory.question,
        steps=[ErrorStep(error_type="log_line_too_large", message=message)],
        end_reason="error",
        error=f"log_line_too_large: {message}",
        started_at=trajectory.started_at,
        finished_at=trajectory.finished_at or utc_now(),
        metadata={"dropped_steps": len(trajectory.steps), "line_bytes": size,
                  "final_answer_head": (trajectory.final_answer or "")[:200]},
    )


def normalise(trajectory: Any, run: Run, question: Question, started_at: str) -> Trajectory:
    """The controller's trajectory with the run's identity enforced (so resume and ingest stay exact)."""
    if not isinstance(trajectory, Trajectory):
        raise TypeError(f"controller returned {type(trajectory).__name__}, not a Trajectory")
    return msgspec.structs.replace(
        trajectory,
        trajectory_id=make_trajectory_id(run.run_id, question.question_id),
        run=run,
        started_at=trajectory.started_at or started_at,
        finished_at=trajectory.finished_at or utc_now(),
    )


def with_judgments(trajectory: Trajectory) -> Trajectory:
    """Attach em / f1 / contain from engine.judges when the controller did not and a gold answer exists."""
    question = trajectory.question
    if trajectory.judgments or not has_gold_answer(question.gold_answer, question.aliases):
        return trajectory
    # An answer echoing the controller's own message or naming every option scores 0 (score_answer).
    judgments: list[Judgment] = list(
        score_answer(trajectory.final_answer, question.gold_answer, list(question.aliases),
                     question=question.text, messages=controller_messages(trajectory.steps))
    )
    return msgspec.structs.replace(trajectory, judgments=judgments)


def trajectory_cost(trajectory: Trajectory) -> float:
    """The run's own total when given, else the sum of step costs."""
    if trajectory.total_cost_usd is not None:
        return trajectory.total_cost_usd
    return sum(s.cost_usd or 0.0 for s in trajectory.steps)
