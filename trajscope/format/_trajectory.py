"""The trajectory record: one agent run on one question, self-contained (run + question + steps)."""
from __future__ import annotations

from typing import Any, Literal

from ._records import SCHEMA_VERSION, EndReason, HumanLabel, Judgment, Question, Record, RegisterEvent, Run
from ._steps import Step


class ForkOrigin(Record, kw_only=True):
    """Where a counterfactual re-run branched off: its parent trajectory, the step and the intervention.

    Steps 0..step_index-1 of the child are the parent's (answered from the response cache); the
    intervention applies at step_index (docs/forks.md lists the interventions)."""

    parent_trajectory_id: str
    parent_run_id: str
    step_index: int
    intervention: str  # inject_gold | force_read | remove_decoy | replace_query | reject_final | ...
    argument: str | None = None  # the chunk id, query, register edit or model the intervention used
    rule: str | None = None  # how the step was chosen: a number, "final", "first_read", ...
    placebo: bool = False  # a control intervention (a non-gold passage of equal length)
    prefix_model_calls: int | None = None  # model calls the prefix made that the cache did not answer
    prefix_cache_hits: int | None = None
    # An imported parent: its prefix was answered from its own log (its agent's calls are in no cache).
    prefix_log_replays: int | None = None


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
    # Set on a counterfactual re-run (trajscope fork): the parent, the step and the intervention.
    fork: ForkOrigin | None = None
    # Human annotations the source log carries about its steps (Who&When's mistake_step, ...).
    human_labels: list[HumanLabel] = []


def make_trajectory_id(run_id: str, question_id: str) -> str:
    """Deterministic id, so a rerun of the same (run, question) replaces rather than duplicates."""
    return f"{run_id}::{question_id}"
