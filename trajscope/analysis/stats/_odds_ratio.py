"""The marginal odds ratio of one 2x2 table with its Woolf (log-scale) confidence interval."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats


@dataclass(frozen=True)
class OddsRatio:
    """Odds ratio ad / bc of [[a, b], [c, d]] and its Woolf CI (NaN when a cell is empty)."""

    odds_ratio: float
    ci_low: float
    ci_high: float
    n: int
    confidence: float


def odds_ratio(table: np.ndarray, *, confidence: float = 0.95) -> OddsRatio:
    """Rows: exposure yes / no; columns: event yes / no. Matches statsmodels' Table2x2 without a
    continuity correction: an empty cell gives an undefined interval, never a guessed one."""
    t = np.asarray(table, dtype=float).reshape(2, 2)
    a, b, c, d = t.ravel()
    n = int(t.sum())
    if min(a, b, c, d) == 0:
        ratio = np.inf if b * c == 0 and a * d > 0 else (a * d / (b * c) if b * c > 0 else np.nan)
        return OddsRatio(float(ratio), np.nan, np.nan, n, confidence)
    log_or = np.log(a * d / (b * c))
    half = stats.norm.isf((1 - confidence) / 2) * np.sqrt(1 / a + 1 / b + 1 / c + 1 / d)
    return OddsRatio(float(np.exp(log_or)), float(np.exp(log_or - half)), float(np.exp(log_or + half)), n,
                     confidence)


__all__ = ["OddsRatio", "odds_ratio"]
