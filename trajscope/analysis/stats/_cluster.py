"""McNemar pooled over seeds: the discordant pairs of every seed's pairing summed into one test."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ._mcnemar import McNemarResult, mcnemar_test


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


__all__ = ["PooledMcNemar", "pooled_mcnemar"]
