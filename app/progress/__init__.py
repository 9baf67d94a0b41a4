"""The progress of a warehouse being built (`trajscope demo`): a JSON file beside it, shown on the Overview.

The builder writes it (atomically) as it goes; the dashboard only reads it, and counts what has
arrived from the warehouse itself, so the file holds the plan and the stage, never the numbers.
"""
from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import msgspec

from trajscope.runtime import pid_alive

STAGES = ("setup", "preparing", "runs", "judging", "audit", "done", "failed")


class PlannedRun(msgspec.Struct, kw_only=True):
    """One condition of the build: its run id and how many trajectories it will hold."""

    run_id: str
    controller: str
    condition: str
    planned: int
    judged: bool = False


class BuildProgress(msgspec.Struct, kw_only=True):
    """Where a build stands: stage, a one-line message, the runs it plans, when it started and last moved."""

    stage: str
    message: str = ""
    started_at: str
    updated_at: str
    runs: list[PlannedRun] = []
    url: str | None = None
    pid: int | None = None


def progress_path(db_path: Path) -> Path:
    """Where the build of `db_path` reports its progress."""
    db_path = Path(db_path)
    return db_path.with_name(db_path.name + ".build.json")


def now() -> str:
    """The current time as ISO 8601 UTC (seconds)."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def write_progress(db_path: Path, progress: BuildProgress) -> None:
    """Replace the progress file in one step (a reader never sees half of it)."""
    path = progress_path(db_path)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(msgspec.json.encode(msgspec.structs.replace(progress, updated_at=now())))
    os.replace(tmp, path)


def read_progress(db_path: Path) -> BuildProgress | None:
    """The build's progress, or None when no build reported one (or the file is unreadable)."""
    try:
        return msgspec.json.decode(progress_path(db_path).read_bytes(), type=BuildProgress)
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return None


def arrived_sql(run_ids: list[str]) -> str:
    """Per planned run: trajectories in the warehouse, and how many of them are judged."""
    from trajscope.app.access import sql_literal

    runs = ", ".join(sql_literal(r) for r in run_ids) or "NULL"
    return f"""SELECT t.run_id, count(*) AS arrived, count(c.correct) AS judged
FROM trajectories t
LEFT JOIN trajectory_correctness c USING (trajectory_id)
WHERE t.run_id IN ({runs})
GROUP BY t.run_id"""


def build_running(progress: BuildProgress | None) -> bool:
    """The build has not finished or failed, and its process is still alive."""
    if progress is None or progress.stage in ("done", "failed"):
        return False
    return progress.pid is None or pid_alive(progress.pid)


__all__ = ["STAGES", "BuildProgress", "PlannedRun", "arrived_sql", "build_running", "now", "progress_path",
           "read_progress", "write_progress"]
