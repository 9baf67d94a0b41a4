"""Answer-presence intervention audit: compile-then-read pipelines, the four edits, the sentinel panel, the runner."""
from ._interventions import (
    INTERVENTIONS,
    MIN_GOLD_CHARS,
    PLACEBO_SEED,
    Edit,
    answer_spans,
    gold_is_auditable,
    gold_word_count,
    has_answer,
    insert_mid,
    insert_prepend,
    midpoint_boundary,
    placebo,
    placebo_candidates,
    placebo_span,
    remove_answer,
    sentence_boundaries,
)
from ._log import AuditLog, AuditLogCorrupt, AuditLogState, recover_audit_log
from ._pipelines import (
    COMPILE_DECODING,
    READER_DECODING,
    VERIFY_BASELINES,
    Decoding,
    compile_messages,
    raw_context,
    reader_messages,
    verify_messages,
)
from ._runner import AuditDataset, AuditSummary, audit_question, run_audit, run_audit_async
from ._sentinels import MASK, SENTINEL_PANEL, sentinel_label
from ._spec import B1_SOURCES, AuditSpec
from ._strata import questions_by_b1_stratum

__all__ = [
    "B1_SOURCES", "COMPILE_DECODING", "INTERVENTIONS", "MASK", "MIN_GOLD_CHARS", "PLACEBO_SEED", "READER_DECODING",
    "SENTINEL_PANEL", "VERIFY_BASELINES", "AuditDataset", "AuditLog", "AuditLogCorrupt", "AuditLogState",
    "AuditSpec", "AuditSummary", "Decoding", "Edit", "answer_spans", "audit_question", "compile_messages",
    "gold_is_auditable", "gold_word_count", "has_answer", "insert_mid", "insert_prepend",
    "midpoint_boundary", "placebo", "placebo_candidates", "placebo_span", "questions_by_b1_stratum", "raw_context",
    "reader_messages", "recover_audit_log", "remove_answer", "run_audit", "run_audit_async",
    "sentence_boundaries", "sentinel_label", "verify_messages",
]
