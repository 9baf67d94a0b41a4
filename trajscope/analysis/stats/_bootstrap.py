"""The one paired bootstrap: percentile CI of a mean per-question difference, vectorised
(compare and audit both use it)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

DEFAULT_RESAMPLES = 1000
DEFAULT_SEED = 42
DEFAULT_CONFIDENCE = 0.95
# Above this many distinct per-question differences, resample indices instead of value counts.
_MAX_DISTINCT_FOR_COUNTS = 64
_INDEX_BLOCK_CELLS = 8_000_000


@dataclass(frozen=True)
class BootstrapCI:
    """Observed mean difference with its percentile bootstrap interval."""

    delta: float
    low: float
    high: float
    n_resamples: int
    seed: int
    confidence: float


def generator(seed: int) -> np.random.Generator:
    """The seeded NumPy generator every resampling and simulation in analysis.stats draws from."""
    return np.random.default_rng(seed)


def bootstrap_means(diff: np.ndarray, n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> np.ndarray:
    """Means of n_resamples resamples (with replacement) of diff, from a NumPy generator at seed."""
    diff = np.asarray(diff, dtype=float)
    rng = generator(seed)
    n = diff.size
    values, counts = np.unique(diff, return_counts=True)
    if values.size <= _MAX_DISTINCT_FOR_COUNTS:
        # Resampling n indices with replacement draws the value counts from a multinomial, so for
        # 0/1 outcomes (three distinct differences) this is the same bootstrap at O(resamples).
        draws = rng.multinomial(n, counts / n, size=n_resamples)
        return draws @ values / n
    block = max(1, _INDEX_BLOCK_CELLS // n)
    means = np.empty(n_resamples)
    for start in range(0, n_resamples, block):
        stop = min(n_resamples, start + block)
        idx = rng.integers(0, n, size=(stop - start, n), dtype=np.int64 if n > 2**31 - 1 else np.int32)
        means[start:stop] = diff[idx].mean(axis=1)
    return means


def paired_bootstrap_delta(
    a: np.ndarray,
    b: np.ndarray,
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    confidence: float = DEFAULT_CONFIDENCE,
) -> BootstrapCI:
    """mean(b - a) with a percentile CI from resampling questions (pairs) with replacement."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.shape != b.shape or a.ndim != 1 or a.size == 0:
        raise ValueError("paired bootstrap needs two equal-length, non-empty 1-d outcome arrays")
    return bootstrap_differences(b - a, n_resamples=n_resamples, seed=seed, confidence=confidence)


def bootstrap_differences(
    diff: np.ndarray,
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    confidence: float = DEFAULT_CONFIDENCE,
) -> BootstrapCI:
    """mean(diff) of per-question paired differences with a percentile CI from resampling questions."""
    diff = np.asarray(diff, dtype=float)
    if diff.ndim != 1 or diff.size == 0:
        raise ValueError("paired bootstrap needs a non-empty 1-d array of per-question differences")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    means = bootstrap_means(diff, n_resamples, seed)
    alpha = 1 - confidence
    low, high = np.quantile(means, [alpha / 2, 1 - alpha / 2])
    return BootstrapCI(float(diff.mean()), float(low), float(high), n_resamples, seed, confidence)


_CLUSTER_BLOCK = 200  # cluster resamples per block: memory is clusters * _CLUSTER_BLOCK


def cluster_bootstrap_delta(
    clusters: np.ndarray | list,
    a: np.ndarray,
    b: np.ndarray,
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    confidence: float = DEFAULT_CONFIDENCE,
) -> BootstrapCI:
    """mean(b - a) over all (question, seed) pairs with a percentile CI from resampling whole questions
    (clusters) with replacement, so a question's repeated seeds or epochs are not counted as independent
    evidence. Compare uses paired_bootstrap_delta when each question has one pair."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    keys = np.asarray(clusters, dtype=object)
    if not (a.shape == b.shape == keys.shape) or a.ndim != 1 or a.size == 0:
        raise ValueError("cluster bootstrap needs equal-length, non-empty cluster ids and outcomes")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    _, index = np.unique(keys.astype(str), return_inverse=True)
    n_clusters = int(index.max()) + 1
    sums = np.bincount(index, weights=b - a, minlength=n_clusters)
    sizes = np.bincount(index, minlength=n_clusters).astype(float)
    rng = generator(seed)
    means = np.empty(n_resamples)
    for start in range(0, n_resamples, _CLUSTER_BLOCK):
        stop = min(n_resamples, start + _CLUSTER_BLOCK)
        drawn = rng.integers(0, n_clusters, size=(stop - start, n_clusters))
        means[start:stop] = sums[drawn].sum(axis=1) / sizes[drawn].sum(axis=1)
    alpha = 1 - confidence
    low, high = np.quantile(means, [alpha / 2, 1 - alpha / 2])
    return BootstrapCI(float((b - a).mean()), float(low), float(high), n_resamples, seed, confidence)


__all__ = [
    "DEFAULT_CONFIDENCE", "DEFAULT_RESAMPLES", "DEFAULT_SEED", "BootstrapCI", "bootstrap_differences",
    "bootstrap_means", "cluster_bootstrap_delta", "generator", "paired_bootstrap_delta",
]
