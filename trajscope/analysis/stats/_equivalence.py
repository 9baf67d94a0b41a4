"""TOST equivalence test of a paired mean difference within a stated margin."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats


@dataclass(frozen=True)
class TOSTResult:
    """Two one-sided paired t-tests for -margin < mean(b - a) < margin."""

    delta: float
    margin: float
    p_lower: float
    p_upper: float
    p_value: float
    alpha: float
    equivalent: bool


def tost_paired(a: np.ndarray, b: np.ndarray, margin: float, *, alpha: float = 0.05) -> TOSTResult:
    """Equivalent when both one-sided tests reject at alpha (p = the larger of the two)."""
    if margin <= 0:
        raise ValueError(f"the equivalence margin must be positive, got {margin}")
    diff = np.asarray(b, dtype=float) - np.asarray(a, dtype=float)
    n = diff.size
    if n < 2:
        raise ValueError("TOST needs at least two paired questions")
    mean = float(diff.mean())
    se = float(diff.std(ddof=1) / np.sqrt(n))
    if se == 0:
        # Every difference is identical: the mean is known exactly.
        p_lower = 0.0 if mean > -margin else 1.0
        p_upper = 0.0 if mean < margin else 1.0
    else:
        p_lower = float(stats.t.sf((mean + margin) / se, n - 1))
        p_upper = float(stats.t.cdf((mean - margin) / se, n - 1))
    p_value = max(p_lower, p_upper)
    return TOSTResult(mean, margin, p_lower, p_upper, p_value, alpha, p_value < alpha)


__all__ = ["TOSTResult", "tost_paired"]
