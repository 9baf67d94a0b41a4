"""Mantel-Haenszel pooled odds ratio across 2x2 strata, Robins-Breslow-Greenland CI, CMH test."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats


@dataclass(frozen=True)
class MantelHaenszelResult:
    """Pooled odds ratio with its CI and the Cochran-Mantel-Haenszel test of OR = 1."""

    odds_ratio: float
    ci_low: float
    ci_high: float
    log_or_se: float
    cmh_statistic: float
    cmh_p: float
    n_strata: int
    confidence: float


def mantel_haenszel(tables: np.ndarray, *, confidence: float = 0.95) -> MantelHaenszelResult:
    """Pool K 2x2 tables [[a, b], [c, d]] (rows: exposure yes/no, columns: event yes/no).

    Strata with fewer than two observations carry no information and are dropped, as in
    statsmodels' StratifiedTable (which this matches).
    """
    t = np.asarray(tables, dtype=float).reshape(-1, 2, 2)
    t = t[t.sum(axis=(1, 2)) > 1]
    if t.shape[0] == 0:
        raise ValueError("Mantel-Haenszel needs at least one stratum with two or more observations")
    a, b, c, d = t[:, 0, 0], t[:, 0, 1], t[:, 1, 0], t[:, 1, 1]
    n = a + b + c + d
    ad, bc = a * d / n, b * c / n
    apd, bpc = (a + d) / n, (b + c) / n
    r, s = ad.sum(), bc.sum()
    # 0/0 (no stratum with both exposures and both outcomes) is undefined, as in statsmodels.
    odds_ratio = r / s if s > 0 else (np.inf if r > 0 else np.nan)
    # Robins, Breslow and Greenland (1986) variance of log OR.
    var = (
        np.sum(apd * ad) / (2 * r**2)
        + np.sum(apd * bc + bpc * ad) / (2 * r * s)
        + np.sum(bpc * bc) / (2 * s**2)
    ) if r > 0 and s > 0 else np.inf
    se = float(np.sqrt(var))
    z = stats.norm.ppf(1 - (1 - confidence) / 2)
    log_or = np.log(odds_ratio) if 0 < odds_ratio < np.inf else np.nan
    low = float(np.exp(log_or - z * se)) if np.isfinite(se) else np.nan
    high = float(np.exp(log_or + z * se)) if np.isfinite(se) else np.nan
    # CMH statistic without continuity correction.
    row1, col1 = a + b, a + c
    expected = row1 * col1 / n
    variance = row1 * (c + d) * col1 * (b + d) / (n**2 * (n - 1))
    cmh = float((a.sum() - expected.sum()) ** 2 / variance.sum()) if variance.sum() > 0 else np.nan
    cmh_p = float(stats.chi2.sf(cmh, 1)) if np.isfinite(cmh) else np.nan
    return MantelHaenszelResult(float(odds_ratio), low, high, se, cmh, cmh_p, int(t.shape[0]), confidence)


__all__ = ["MantelHaenszelResult", "mantel_haenszel"]
