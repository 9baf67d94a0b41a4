"""Read-Gate and its broader variants: predicates that reject a `final` before evidence is read."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from trajscope.engine.entities import LOW_EVIDENCE_THRESHOLD, mentions, passage_haystack, question_coverage
from trajscope.engine.prompts import render_prompt


@dataclass(frozen=True)
class EvidenceState:
    """What the environment knows when a `final` arrives."""

    question: str
    search_count: int
    read_count: int
    read_texts: Sequence[str] = field(default_factory=tuple)
    snippet_texts: Sequence[str] = field(default_factory=tuple)


@dataclass(frozen=True)
class GateDecision:
    """A rejection: which gate fired, why, and the corrective observation shown to the model."""

    gate: str
    reason: str
    observation: str


Gate = Callable[[str, EvidenceState], GateDecision | None]


def read_gate(answer: str, state: EvidenceState) -> GateDecision | None:
    """Read-Gate: reject a final when search_count > 0 and read_count == 0."""
    if state.search_count > 0 and state.read_count == 0:
        return GateDecision(
            "read_gate",
            f"search_count={state.search_count} read_count=0",
            render_prompt("gate_read"),
        )
    return None


def low_evidence_gate(answer: str, state: EvidenceState) -> GateDecision | None:
    """+lowev: reject when the question's named entities are covered < 80% by read passages; the same
    extractor, matching and threshold as the low-evidence label (engine.entities, failure_rg)."""
    found = question_coverage(state.question, list(state.read_texts))
    if found.low_evidence:
        coverage, missing = found.coverage or 0.0, found.missing
        return GateDecision(
            "lowev",
            f"entity coverage {coverage:.2f} < {LOW_EVIDENCE_THRESHOLD:.2f}; missing: {', '.join(missing)}",
            render_prompt("gate_lowev", coverage=round(100 * coverage), missing=", ".join(missing)),
        )
    return None


def snippet_only_gate(answer: str, state: EvidenceState) -> GateDecision | None:
    """Reject an answer found in search snippets but in no read passage."""
    # The snippet-only label's test (answer_checks): the answer in a snippet and in no read passage.
    in_snippet = mentions(passage_haystack(state.snippet_texts), answer)
    if in_snippet and not mentions(passage_haystack(state.read_texts), answer):
        return GateDecision(
            "snippet_only",
            "answer appears only in search snippets",
            render_prompt("gate_snippet", answer=answer),
        )
    return None


GATE_SETS: dict[str, tuple[Gate, ...]] = {
    "none": (),
    "read": (read_gate,),
    "lowev": (read_gate, low_evidence_gate),
    "full": (read_gate, snippet_only_gate, low_evidence_gate),
}


def first_rejection(gates: Sequence[Gate], answer: str, state: EvidenceState) -> GateDecision | None:
    """The first gate (in priority order) that rejects the answer, if any."""
    for gate in gates:
        decision = gate(answer, state)
        if decision is not None:
            return decision
    return None
