"""The trajectory record: one agent run on one question, self-contained (run + question + steps)."""
from __future__ import annotations

from typing import Any, Literal

from ._records import SCHEMA_VERSION, EndReason, Judgment, Question, Record, RegisterEvent, Run
from ._steps import Step


class Trajectory(Record, kw_only=True):
    """One line of a trajectory log."""

    schema_version: Literal["1"] = SCHEMA_VERSION
    trajectory_id: str
    run: Run
    question: Question
    steps: list[Step] = []
    register_events: list[RegisterEvent] = []
    final_answer: str | None = None
    end_reason: EndReason | None = None
    error: str | None = None
    judgments: list[Judgment] = []
    started_at: str | None = None
    finished_at: str | None = None
    # Totals a source reports itself (e.g. A-RAG total_cost); per-step sums are computed in views.
    total_tokens_in: int | None = None
    total_tokens_out: int | None = None
    total_cost_usd: float | None = None
    total_latency_ms: float | None = None
    metadata: dict[str, Any] = {}


def make_trajectory_id(run_id: str, question_id: str) -> str:
    """Deterministic id, so a rerun of the same (run, question) replaces rather than duplicates."""
    return f"{run_id}::{question_id}"
