"""Multiple-comparison correction across a grid of comparisons: Holm and Benjamini-Hochberg."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

METHODS = ("holm", "fdr_bh")


@dataclass(frozen=True)
class AdjustedPValues:
    """Adjusted p-values in the input order, which hypotheses are rejected at alpha, and the method."""

    method: str
    alpha: float
    p_values: np.ndarray
    adjusted: np.ndarray
    reject: np.ndarray


def _holm(p: np.ndarray) -> np.ndarray:
    m = p.size
    order = np.argsort(p, kind="mergesort")
    stepped = np.maximum.accumulate((m - np.arange(m)) * p[order])
    out = np.empty(m)
    out[order] = np.minimum(stepped, 1.0)
    return out


def _benjamini_hochberg(p: np.ndarray) -> np.ndarray:
    m = p.size
    order = np.argsort(p, kind="mergesort")
    scaled = p[order] * m / np.arange(1, m + 1)
    # The running minimum from the largest p downwards keeps adjusted values monotone.
    stepped = np.minimum.accumulate(scaled[::-1])[::-1]
    out = np.empty(m)
    out[order] = np.minimum(stepped, 1.0)
    return out


def adjust_p_values(p_values: Sequence[float], method: str = "holm", *, alpha: float = 0.05) -> AdjustedPValues:
    """Holm (family-wise error) or Benjamini-Hochberg (false discovery rate) adjusted p-values,
    as statsmodels' multipletests(method="holm" | "fdr_bh"); NaN p-values stay NaN and are not counted."""
    if method not in METHODS:
        raise ValueError(f"unknown correction {method!r}; choose one of {', '.join(METHODS)}")
    p = np.asarray(p_values, dtype=float)
    if p.ndim != 1:
        raise ValueError("p-values must be a 1-d sequence")
    if ((p < 0) | (p > 1)).any():
        raise ValueError("p-values must lie in [0, 1]")
    adjusted = np.full(p.size, np.nan)
    finite = ~np.isnan(p)
    if finite.any():
        adjusted[finite] = (_holm if method == "holm" else _benjamini_hochberg)(p[finite])
    reject = np.where(finite, adjusted <= alpha, False)
    return AdjustedPValues(method, alpha, p, adjusted, reject)


__all__ = ["METHODS", "AdjustedPValues", "adjust_p_values"]
