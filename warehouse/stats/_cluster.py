"""Seeds and epochs as clusters: the paired bootstrap that resamples questions, and McNemar pooled over seeds."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ._bootstrap import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, DEFAULT_SEED, BootstrapCI
from ._mcnemar import McNemarResult, mcnemar_test

_BLOCK = 200  # resamples per block: memory is clusters * _BLOCK


def cluster_bootstrap_delta(
    clusters: Sequence[object],
    a: np.ndarray,
    b: np.ndarray,
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    confidence: float = DEFAULT_CONFIDENCE,
) -> BootstrapCI:
    """mean(b - a) over all (question, seed) pairs with a percentile CI from resampling whole
    questions (clusters) with replacement, so repeated seeds of one question are not counted as
    independent evidence. With one pair per question it is the ordinary paired bootstrap."""
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
    rng = np.random.default_rng(seed)
    means = np.empty(n_resamples)
    for start in range(0, n_resamples, _BLOCK):
        stop = min(n_resamples, start + _BLOCK)
        drawn = rng.integers(0, n_clusters, size=(stop - start, n_clusters))
        means[start:stop] = sums[drawn].sum(axis=1) / sizes[drawn].sum(axis=1)
    alpha = 1 - confidence
    low, high = np.quantile(means, [alpha / 2, 1 - alpha / 2])
    return BootstrapCI(float((b - a).mean()), float(low), float(high), n_resamples, seed, confidence)


@dataclass(frozen=True)
class PooledMcNemar:
    """McNemar on the discordant counts summed over seeds, with each seed's own counts."""

    per_seed: list[tuple[int, int]]  # (a_only, b_only) of each seed's pairing
    result: McNemarResult


def pooled_mcnemar(per_seed: Sequence[tuple[int, int]]) -> PooledMcNemar:
    """Exact and continuity-corrected McNemar on sum(a_only) vs sum(b_only) over the seeds' pairings."""
    counts = [(int(x), int(y)) for x, y in per_seed]
    if not counts:
        raise ValueError("pooled McNemar needs at least one seed's discordant counts")
    return PooledMcNemar(counts, mcnemar_test(sum(x for x, _ in counts), sum(y for _, y in counts)))


__all__ = ["PooledMcNemar", "cluster_bootstrap_delta", "pooled_mcnemar"]
