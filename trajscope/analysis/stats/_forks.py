"""Rescue statistics of a fork run: the rescue rate with its Wilson CI, McNemar on the parent/child pairs,
and the paired accuracy delta with its bootstrap CI."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from trajscope.format import CORRECT_AT

from ._bootstrap import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, DEFAULT_SEED, BootstrapCI, paired_bootstrap_delta
from ._mcnemar import McNemarResult, mcnemar_test


@dataclass(frozen=True)
class ForkRescueStats:
    """Paired parent/child outcomes of one fork run; rescue_rate is None when no parent was wrong."""

    n_pairs: int
    n_parent_wrong: int
    n_rescued: int
    n_broke: int
    rescue_rate: float | None
    rescue_low: float | None
    rescue_high: float | None
    mcnemar: McNemarResult
    accuracy_delta: BootstrapCI | None
    reason: str | None = None


def wilson_interval(successes: int, n: int, confidence: float = DEFAULT_CONFIDENCE) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion (n > 0)."""
    z = float(stats.norm.ppf(0.5 + confidence / 2))
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return float(max(0.0, centre - half)), float(min(1.0, centre + half))


def fork_rescue_stats(parent_correct: np.ndarray, child_correct: np.ndarray, *, confidence: float = DEFAULT_CONFIDENCE,
                      n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> ForkRescueStats:
    """Statistics over pairs (one per child, its parent's verdict and its own, 0/1), as fork_pairs lists them."""
    a = np.asarray(parent_correct, dtype=float) >= CORRECT_AT
    b = np.asarray(child_correct, dtype=float) >= CORRECT_AT
    if a.shape != b.shape:
        raise ValueError("parent and child outcomes must pair one to one")
    rescued, broke = int(np.sum(~a & b)), int(np.sum(a & ~b))
    wrong = int(np.sum(~a))
    mcnemar = mcnemar_test(a_only=broke, b_only=rescued)
    delta = (paired_bootstrap_delta(a.astype(float), b.astype(float), n_resamples=n_resamples, seed=seed,
                                    confidence=confidence) if a.size else None)
    if wrong == 0:
        reason = "does not apply: no judged parent was wrong" if a.size else "does not apply: no judged pair"
        return ForkRescueStats(int(a.size), 0, rescued, broke, None, None, None, mcnemar, delta, reason)
    low, high = wilson_interval(rescued, wrong, confidence)
    return ForkRescueStats(int(a.size), wrong, rescued, broke, rescued / wrong, low, high, mcnemar, delta)


__all__ = ["ForkRescueStats", "fork_rescue_stats", "wilson_interval"]
