"""Paired bootstrap of a mean difference: percentile CI, NumPy generator with a fixed seed."""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

N_RESAMPLES = 1000
SEED = 42
CONFIDENCE = 0.95
_BLOCK = 100  # resamples drawn per block, so memory stays n * _BLOCK whatever n_resamples is


@dataclass(frozen=True)
class Estimate:
    """A paired mean difference with its bootstrap percentile interval (NaN when n = 0)."""

    n: int
    mean: float
    low: float
    high: float

    @property
    def ci_contains_zero(self) -> bool:
        """True when low <= 0 <= high."""
        return self.low <= 0.0 <= self.high

    def scaled(self, factor: float) -> Estimate:
        """The same estimate in other units (e.g. F1 points: factor 100)."""
        return Estimate(self.n, self.mean * factor, self.low * factor, self.high * factor)


def bootstrap_means(values: np.ndarray, n_resamples: int = N_RESAMPLES, seed: int = SEED) -> np.ndarray:
    """Means of n_resamples resamples (with replacement) of values."""
    rng = np.random.default_rng(seed)
    n = len(values)
    means = np.empty(n_resamples)
    for start in range(0, n_resamples, _BLOCK):
        size = min(_BLOCK, n_resamples - start)
        means[start:start + size] = values[rng.integers(0, n, size=(size, n))].mean(axis=1)
    return means


def paired_bootstrap(
    deltas: Sequence[float] | np.ndarray, *, n_resamples: int = N_RESAMPLES, seed: int = SEED,
    confidence: float = CONFIDENCE,
) -> Estimate:
    """Mean of per-item paired differences and its percentile bootstrap CI."""
    values = np.asarray(deltas, dtype=float)
    if values.size == 0:
        return Estimate(0, math.nan, math.nan, math.nan)
    means = bootstrap_means(values, n_resamples, seed)
    tail = (1.0 - confidence) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return Estimate(int(values.size), float(values.mean()), float(low), float(high))


__all__ = ["CONFIDENCE", "N_RESAMPLES", "SEED", "Estimate", "bootstrap_means", "paired_bootstrap"]
