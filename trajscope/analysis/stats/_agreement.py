"""Cohen's kappa between two raters (two judges, two entity extractors, judge vs Contain-Acc)."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Agreement:
    """Cohen's kappa with raw agreement and the item count."""

    kappa: float
    observed_agreement: float
    expected_agreement: float
    n: int


def cohen_kappa(x: Sequence[object] | np.ndarray, y: Sequence[object] | np.ndarray) -> Agreement:
    """Unweighted Cohen's kappa of two label sequences over the same items (any hashable labels)."""
    x_arr = np.asarray(x, dtype=object)
    y_arr = np.asarray(y, dtype=object)
    if x_arr.shape != y_arr.shape or x_arr.ndim != 1 or x_arr.size == 0:
        raise ValueError("kappa needs two equal-length, non-empty label sequences")
    labels = sorted(set(x_arr.tolist()) | set(y_arr.tolist()), key=repr)
    index = {label: i for i, label in enumerate(labels)}
    xi = np.fromiter((index[v] for v in x_arr), dtype=np.int64, count=x_arr.size)
    yi = np.fromiter((index[v] for v in y_arr), dtype=np.int64, count=y_arr.size)
    k = len(labels)
    confusion = np.bincount(xi * k + yi, minlength=k * k).reshape(k, k) / x_arr.size
    observed = float(np.trace(confusion))
    expected = float(confusion.sum(axis=1) @ confusion.sum(axis=0))
    # Both raters constant and identical: perfect agreement, kappa defined as 1 (as scikit-learn's is nan).
    kappa = 1.0 if expected == 1.0 else (observed - expected) / (1 - expected)
    return Agreement(float(kappa), observed, expected, int(x_arr.size))


__all__ = ["Agreement", "cohen_kappa"]
