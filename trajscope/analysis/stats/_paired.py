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


def _unique_ids(ids: Sequence[str], values: Sequence[float], side: str) -> tuple[np.ndarray, np.ndarray]:
    id_array = np.asarray(ids, dtype=str)
    value_array = np.asarray(values, dtype=float)
    if id_array.shape != value_array.shape:
        raise ValueError(f"run {side}: {id_array.size} question ids but {value_array.size} outcomes")
    unique, counts = np.unique(id_array, return_counts=True)
    if (counts > 1).any():
        raise UnpairedComparison(f"run {side} has question id {unique[counts > 1][0]!r} more than once")
    return id_array, value_array


def pair_outcomes(
    ids_a: Sequence[str], values_a: Sequence[float], ids_b: Sequence[str], values_b: Sequence[float]
) -> PairedOutcomes:
    """Outcomes of A and B matched by question id; raises UnpairedComparison if none are shared."""
    id_a, val_a = _unique_ids(ids_a, values_a, "A")
    id_b, val_b = _unique_ids(ids_b, values_b, "B")
    shared, index_a, index_b = np.intersect1d(id_a, id_b, assume_unique=True, return_indices=True)
    if shared.size == 0:
        raise UnpairedComparison(
            "the two runs share no question ids: a paired comparison is impossible "
            "(compare runs over the same questions)"
        )
    return PairedOutcomes(
        question_ids=shared.tolist(),
        a=val_a[index_a],
        b=val_b[index_b],
        only_a=np.setdiff1d(id_a, shared, assume_unique=True).tolist(),
        only_b=np.setdiff1d(id_b, shared, assume_unique=True).tolist(),
    )


__all__ = ["PairedOutcomes", "UnpairedComparison", "pair_outcomes"]
