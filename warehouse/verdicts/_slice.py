"""The SQL of a scanner's slice: the runs, a user's condition over trajectory_forensics, a stable order."""
from __future__ import annotations

from collections.abc import Sequence

# The relation a --where condition is written over: one row per trajectory (columns: `trajscope views
# trajectory_forensics`); other views are reachable through subqueries on trajectory_id.
SLICE_RELATION = "trajectory_forensics"


def _quote(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def slice_sql(runs: Sequence[str], where: str | None = None, limit: int | None = None) -> str:
    """The one SELECT that picks the trajectories (run through the read path, which checks and bounds it)."""
    if not runs:
        raise ValueError("--runs: name at least one run")
    condition = f"\n  AND ({where})" if where and where.strip() else ""
    sql = (f"SELECT trajectory_id FROM {SLICE_RELATION}\nWHERE run_id IN ({', '.join(_quote(r) for r in runs)})"
           f"{condition}\nORDER BY run_id, question_id, trajectory_id")
    return sql + (f"\nLIMIT {int(limit)}" if limit is not None else "")


__all__ = ["SLICE_RELATION", "slice_sql"]
