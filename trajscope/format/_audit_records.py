"""The audit record: one question through a compile-then-read pipeline, every context and reader output."""
from __future__ import annotations

from typing import Any, Final, Literal

from ._records import Record

AUDIT_SCHEMA_VERSION: Final = "1"

Intervention = Literal["none", "remove", "placebo", "insert_prepend", "insert_mid", "identity"]
INTERVENTION_NAMES: tuple[str, ...] = Intervention.__args__  # type: ignore[attr-defined]
# remove and placebo write a sentinel into the context; the others carry none.
SENTINEL_INTERVENTIONS = ("remove", "placebo")
RAW_BASELINE = "b1"
# A compiled baseline with the question withheld from the compiler (AP §14) is named <baseline>_blind.
BLIND_SUFFIX = "_blind"


class ReaderOutput(Record, kw_only=True):
    """One reader call: on a baseline's context, unperturbed ("none") or under one intervention."""

    baseline: str
    intervention: Intervention = "none"
    # The replacement text of remove / placebo ("[MASK]", "###", ...); None for the other edits.
    sentinel: str | None = None
    answer: str | None = None
    # The exact context the reader saw; None means the baseline's context (or re-derivable from it).
    context: str | None = None
    # Token F1 against the gold in [0, 1]; filled in at load time when absent.
    f1: float | None = None
    error: str | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    latency_ms: float | None = None
    cost_usd: float | None = None
    cached: bool | None = None


class ModelCall(Record, kw_only=True):
    """Telemetry of one compile or verify call that produced a baseline's context."""

    role: Literal["compile", "verify"]
    baseline: str
    model: str | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    latency_ms: float | None = None
    cost_usd: float | None = None
    cached: bool | None = None
    error: str | None = None


class AuditRecord(Record, kw_only=True):
    """One line of an audit log: contexts maps a baseline ("b1" raw retrieval, "b2", ...) to its text."""

    schema_version: Literal["1"] = AUDIT_SCHEMA_VERSION
    audit_id: str
    # The (reader, compiler, dataset) cell the record belongs to; the audit id when not given.
    cell: str | None = None
    dataset: str | None = None
    question_id: str
    question: str
    gold: str
    aliases: list[str] = []
    reader_model: str | None = None
    compiler_a: str | None = None
    compiler_b: str | None = None
    contexts: dict[str, str] = {}
    outputs: list[ReaderOutput] = []
    calls: list[ModelCall] = []
    # Set when the pipeline failed for this question; such records are kept but never paired.
    error: str | None = None
    started_at: str | None = None
    finished_at: str | None = None
    metadata: dict[str, Any] = {}

    @property
    def record_id(self) -> str:
        """audit_id::question_id, the key a rerun replaces."""
        return make_record_id(self.audit_id, self.question_id)

    @property
    def complete(self) -> bool:
        """No pipeline error and no failed call: a resumed audit need not redo it."""
        return (
            self.error is None
            and all(o.error is None for o in self.outputs)
            and all(c.error is None for c in self.calls)
        )


def make_record_id(audit_id: str, question_id: str) -> str:
    """Deterministic record key, so re-importing or resuming replaces rather than duplicates."""
    return f"{audit_id}::{question_id}"


__all__ = [
    "AUDIT_SCHEMA_VERSION", "BLIND_SUFFIX", "INTERVENTION_NAMES", "RAW_BASELINE", "SENTINEL_INTERVENTIONS",
    "AuditRecord", "Intervention", "ModelCall", "ReaderOutput", "make_record_id",
]
