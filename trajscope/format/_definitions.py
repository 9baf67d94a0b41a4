"""The constants that define a measure, in the bottom layer so engine, warehouse, app and CLI read one value.

The warehouse turns these into SQL macros (warehouse/_definitions.py); docs/definitions.md says which
paper section each comes from.
"""
from __future__ import annotations

from ._steps import SEARCH_KINDS, ReadStep, StepBase

# Read-Gate §3: a final is low-evidence when its question's named entities are covered < 80% by
# the passages the agent read.
LOW_EVIDENCE_THRESHOLD = 0.8

# The entity extractors the low-evidence label is computed with (Read-Gate §5.1 reports both);
# the first is the one the +lowev gate uses at run time, so gate and label agree on it.
ENTITY_EXTRACTORS: tuple[str, ...] = ("regex", "spacy")
GATE_EXTRACTOR = ENTITY_EXTRACTORS[0]

# A verdict (LLM-judge average over judge models, or Contain-Acc) at or above this counts as correct;
# an LLM verdict, when one exists, decides before Contain-Acc (ExecutionRAG App. E; Read-Gate LLM-Acc).
CORRECT_AT = 0.5

# Step kinds that are actions the agent chose (not the environment's own moves).
READ_KIND = "read"
AGENT_ACTION_KINDS: tuple[str, ...] = (*SEARCH_KINDS, READ_KIND, "final", "tool")

# A read step counts as a read (read_count, the zero-read rule, the first read) only when it returned a passage:
# a read of unknown ids returned none. The warehouse's macro is_counted_read is the same rule.
def counts_as_read(step: StepBase) -> bool:
    """Whether the step is a read that returned a passage."""
    return isinstance(step, ReadStep) and bool(step.passages)


# An audit record whose gold, trimmed, is shorter than this is excluded from the audit: so short a text
# matches almost anywhere. The warehouse's macro gold_too_short reads this value.
MIN_GOLD_CHARS = 2

# The rationale of an em / f1 / contain score the importer computed from a log's gold and final answer (the log
# carried no verdict): the warehouse stores it with origin 'import', never as a verdict the log carried. The
# warehouse's macro scored_at_import reads this value.
SCORED_AT_IMPORT = "scored at import: the log's final answer against its gold answer"

# Every end_reason a trajectory records and what it means: the one description of an end_reason column in
# every table and view (the warehouse writes it onto each at install).
END_REASONS: dict[str, str] = {
    "final": "the agent's own final answer",
    "loop_cap": "forced at the loop cap",
    "context_budget": "forced at the context budget",
    "budget": "forced, cause not recorded",
    "forced_answer": "forced, cause not recorded",
    "error": "the run failed",
}


def end_reason_description(subject: str = "the trajectory") -> str:
    """The column description of an end_reason, from END_REASONS."""
    return f"How {subject} ended: " + ", ".join(f"{name} ({meaning})" for name, meaning in END_REASONS.items()) + "."


# End reasons of an answer the environment forced (none is a voluntary final); the first two say why.
FORCED_END_REASONS: tuple[str, ...] = ("loop_cap", "context_budget", "forced_answer", "budget")
# ExecutionRAG App. B: an answer forced at the context budget is "Gave Up"; one forced at the loop cap is
# not (it is labelled by the other rules). A forced answer whose cause the log does not say stays Gave Up.
GAVE_UP_END_REASONS: tuple[str, ...] = ("context_budget", "forced_answer", "budget")

# Per-question outcomes `trajscope compare` and the Compare page offer, and the default of both:
# the papers' criterion (LLM verdict, else Contain-Acc).
COMPARE_METRICS: tuple[str, ...] = ("correct", "contain", "em", "f1", "llm")
DEFAULT_COMPARE_METRIC = "correct"


__all__ = [
    "END_REASONS", "FORCED_END_REASONS", "GAVE_UP_END_REASONS", "MIN_GOLD_CHARS", "counts_as_read",
    "end_reason_description",
    "AGENT_ACTION_KINDS", "COMPARE_METRICS", "CORRECT_AT", "DEFAULT_COMPARE_METRIC", "ENTITY_EXTRACTORS",
    "GATE_EXTRACTOR", "LOW_EVIDENCE_THRESHOLD", "READ_KIND", "SCORED_AT_IMPORT",
]
