"""Read limits of the questions whose statistics need every paired question's row (compare, report)."""
from __future__ import annotations

from trajscope.warehouse import ReadLimits


def statistics_limits(timeout_s: float) -> ReadLimits:
    """The page profile with this time limit and a row cap far above any run's question count.

    The command profile's 100,000-row cap stopped `compare` and `report` at 100k questions per run
    (bench/scale.py at 1M trajectories); the byte cap, not the row count, bounds their memory.
    """
    from trajscope.warehouse.read import profile_limits

    return profile_limits("page").with_overrides(timeout_s=timeout_s, max_rows=50_000_000)


__all__ = ["statistics_limits"]
