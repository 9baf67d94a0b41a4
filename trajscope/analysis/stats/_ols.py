"""Ordinary least squares with cluster-robust standard errors (clusters: questions)."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats


@dataclass(frozen=True)
class ClusteredOLS:
    """Coefficients, cluster-robust SEs, z statistics and two-sided p-values, one entry per regressor."""

    names: list[str]
    coef: np.ndarray
    se: np.ndarray
    z: np.ndarray
    p: np.ndarray
    n: int
    n_clusters: int
    r_squared: float

    def ci(self, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
        """Normal-theory interval of each coefficient, as statsmodels' conf_int for a cluster fit."""
        z = stats.norm.ppf(1 - (1 - confidence) / 2)
        return self.coef - z * self.se, self.coef + z * self.se


def ols_cluster(y: np.ndarray, x: np.ndarray, clusters: Sequence[object], names: Sequence[str]) -> ClusteredOLS:
    """OLS of y on the columns of x (include a constant column yourself) with the sandwich covariance
    summed within clusters and statsmodels' small-sample factor G/(G-1) * (N-1)/(N-K); inference is
    normal, as statsmodels' OLS(...).fit(cov_type="cluster") does by default."""
    y = np.asarray(y, dtype=float)
    x = np.asarray(x, dtype=float)
    n, k = x.shape
    if y.shape != (n,) or len(clusters) != n or len(names) != k:
        raise ValueError("OLS needs y, x rows, clusters and one name per column of x that agree in length")
    if n <= k:
        raise ValueError(f"OLS needs more observations ({n}) than regressors ({k})")
    _, index = np.unique(np.asarray(clusters, dtype=object).astype(str), return_inverse=True)
    g = int(index.max()) + 1
    if g < 2:
        raise ValueError("cluster-robust standard errors need at least two clusters")
    bread = np.linalg.pinv(x.T @ x)
    coef = bread @ x.T @ y
    resid = y - x @ coef
    scores = np.zeros((g, k))
    np.add.at(scores, index, x * resid[:, None])
    meat = scores.T @ scores
    factor = g / (g - 1) * (n - 1) / (n - k)
    cov = factor * bread @ meat @ bread
    se = np.sqrt(np.diag(cov))
    with np.errstate(divide="ignore", invalid="ignore"):
        z = coef / se
    p = 2 * stats.norm.sf(np.abs(z))
    total = ((y - y.mean()) ** 2).sum()
    r2 = float(1 - (resid @ resid) / total) if total > 0 else float("nan")
    return ClusteredOLS(list(names), coef, se, z, p, n, g, r2)


__all__ = ["ClusteredOLS", "ols_cluster"]
