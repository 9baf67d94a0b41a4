"""McNemar's test (exact binomial and chi-square with continuity correction) and the 2x2 transition table."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

from trajscope.format import CORRECT_AT


@dataclass(frozen=True)
class TransitionTable:
    """Paired 2x2 table of correctness, with the question ids in each cell."""

    both_right: list[str]
    a_only: list[str]  # right under A, wrong under B (B broke it)
    b_only: list[str]  # wrong under A, right under B (B fixed it)
    both_wrong: list[str]

    @property
    def counts(self) -> np.ndarray:
        """[[both_right, a_only], [b_only, both_wrong]]: rows A right/wrong, columns B right/wrong."""
        return np.array(
            [[len(self.both_right), len(self.a_only)], [len(self.b_only), len(self.both_wrong)]]
        )


@dataclass(frozen=True)
class McNemarResult:
    """Discordant counts and both p-values; chi2 is None when there are no discordant pairs."""

    a_only: int
    b_only: int
    exact_p: float
    chi2: float | None
    chi2_p: float


def transition_table(question_ids: Sequence[str], a: np.ndarray, b: np.ndarray) -> TransitionTable:
    """Split paired questions by (A correct, B correct): an outcome at or above CORRECT_AT is correct, as
    the says_correct macro has it (a two-judge 1 / 0 split, 0.5, is correct)."""
    a = np.asarray(a, dtype=float) >= CORRECT_AT
    b = np.asarray(b, dtype=float) >= CORRECT_AT
    ids = np.asarray(question_ids, dtype=object)
    return TransitionTable(
        both_right=ids[a & b].tolist(),
        a_only=ids[a & ~b].tolist(),
        b_only=ids[~a & b].tolist(),
        both_wrong=ids[~a & ~b].tolist(),
    )


def mcnemar_test(a_only: int, b_only: int) -> McNemarResult:
    """Two-sided exact binomial McNemar and the continuity-corrected chi-square on the discordant cells."""
    discordant = a_only + b_only
    if discordant == 0:
        return McNemarResult(a_only, b_only, 1.0, None, 1.0)
    exact_p = min(1.0, 2.0 * float(stats.binom.cdf(min(a_only, b_only), discordant, 0.5)))
    chi2 = (abs(a_only - b_only) - 1) ** 2 / discordant
    return McNemarResult(a_only, b_only, exact_p, float(chi2), float(stats.chi2.sf(chi2, 1)))


__all__ = ["McNemarResult", "TransitionTable", "mcnemar_test", "transition_table"]
