"""The audit's view of the one paired bootstrap (analysis.stats): an Estimate per mean difference, NaN when empty."""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from trajscope.analysis.stats import (
    DEFAULT_CONFIDENCE,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    bootstrap_differences,
    bootstrap_means,
)

N_RESAMPLES = DEFAULT_RESAMPLES
SEED = DEFAULT_SEED
CONFIDENCE = DEFAULT_CONFIDENCE


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


def paired_bootstrap(
    deltas: Sequence[float] | np.ndarray, *, n_resamples: int = N_RESAMPLES, seed: int = SEED,
    confidence: float = CONFIDENCE,
) -> Estimate:
    """Mean of per-item paired differences and its percentile bootstrap CI (analysis.stats.bootstrap_differences)."""
    values = np.asarray(deltas, dtype=float)
    if values.size == 0:
        return Estimate(0, math.nan, math.nan, math.nan)
    ci = bootstrap_differences(values, n_resamples=n_resamples, seed=seed, confidence=confidence)
    return Estimate(int(values.size), ci.delta, ci.low, ci.high)


__all__ = ["CONFIDENCE", "N_RESAMPLES", "SEED", "Estimate", "bootstrap_means", "paired_bootstrap"]
