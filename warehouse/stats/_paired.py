"""Aligning two runs' outcomes by question id; an unpaired comparison is refused, never guessed."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


class UnpairedComparison(ValueError):
    """The two runs share no question ids (or repeat one), so a paired statistic has no meaning."""


@dataclass(frozen=True)
class PairedOutcomes:
    """Per-question outcomes of run A and run B on the question ids both answered, sorted by id."""

    question_ids: list[str]
    a: np.ndarray
    b: np.ndarray
    only_a: list[str]
    only_b: list[str]

    @property
    def n(self) -> int:
        """Number of paired questions."""
        return len(self.question_ids)

    @property
    def complete(self) -> bool:
        """True when both runs answered exactly the same question ids."""
        return not self.only_a and not self.only_b

    def pairing_note(self) -> str:
        """One line saying on what the comparison is paired (for tables and the dashboard)."""
        if self.complete:
            return f"paired on all {self.n} question ids"
        return (
            f"paired on the {self.n} shared question ids; {len(self.only_a)} only in A and "
            f"{len(self.only_b)} only in B are excluded"
        )


def _as_mapping(ids: Sequence[str], values: Sequence[float], side: str) -> dict[str, float]:
    mapping: dict[str, float] = {}
    for qid, value in zip(ids, values, strict=True):
        if qid in mapping:
            raise UnpairedComparison(f"run {side} has question id {qid!r} more than once")
        mapping[qid] = float(value)
    return mapping


def pair_outcomes(
    ids_a: Sequence[str], values_a: Sequence[float], ids_b: Sequence[str], values_b: Sequence[float]
) -> PairedOutcomes:
    """Outcomes of A and B matched by question id; raises UnpairedComparison if none are shared."""
    map_a = _as_mapping(ids_a, values_a, "A")
    map_b = _as_mapping(ids_b, values_b, "B")
    shared = sorted(map_a.keys() & map_b.keys())
    if not shared:
        raise UnpairedComparison(
            "the two runs share no question ids: a paired comparison is impossible "
            "(compare runs over the same questions)"
        )
    return PairedOutcomes(
        question_ids=shared,
        a=np.fromiter((map_a[q] for q in shared), dtype=float, count=len(shared)),
        b=np.fromiter((map_b[q] for q in shared), dtype=float, count=len(shared)),
        only_a=sorted(map_a.keys() - map_b.keys()),
        only_b=sorted(map_b.keys() - map_a.keys()),
    )


__all__ = ["PairedOutcomes", "UnpairedComparison", "pair_outcomes"]
