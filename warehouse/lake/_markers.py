"""A lake's small JSON files (its format marker, each writer's commit marker): read by type, up to a size
limit, and checked field by field, so a malformed or hostile marker is one LakeError line."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trajscope.format import NESTING_LIMIT, RecordError, exceeds_nesting_limit, read_side_bytes


class LakeError(ValueError):
    """A lake that cannot be read or written as asked (not a lake, a run already there, a conflict)."""

# A marker holds a writer's id, host, run ids and row counts: kilobytes. 1 MB bounds what one costs to read.
MARKER_LIMIT = 1024 * 1024


def read_marker(path: Path, what: str) -> dict[str, Any]:
    """A marker's JSON object; a FIFO or device, a file past MARKER_LIMIT, bad JSON or another value is a LakeError."""
    try:
        raw = read_side_bytes(path, what, MARKER_LIMIT)
    except RecordError as exc:
        raise LakeError(str(exc)) from None
    except OSError as exc:
        raise LakeError(f"{path}: unreadable {what} ({exc.strerror or exc})") from None
    if exceeds_nesting_limit(raw):
        raise LakeError(f"{path}: {what} nests past the nesting limit of {NESTING_LIMIT} levels")
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise LakeError(f"{path}: {what} is not valid JSON ({' '.join(str(exc).split())})") from None
    if not isinstance(value, dict):
        raise LakeError(f"{path}: {what} is a JSON {type(value).__name__}, not an object")
    return value


@dataclass(frozen=True)
class Commit:
    """One writer's commit marker: who committed which runs, when, from where, and its trajectory count."""

    writer: str
    committed_at: str
    host: str
    runs: tuple[str, ...]
    trajectories: int


def _field(path: Path, commit: dict[str, Any], name: str, kind: type) -> Any:
    value = commit.get(name)
    if not isinstance(value, kind) or isinstance(value, bool):
        shown = "missing" if name not in commit else f"a {type(value).__name__}"
        raise LakeError(f"{path}: field {name}: expected a {kind.__name__}, found {shown}")
    return value


def read_commit(path: Path) -> Commit:
    """A commit marker (COMMITTED/<writer>), every field checked; LakeError naming the file and field."""
    commit = read_marker(path, "commit marker")
    runs, rows = _field(path, commit, "runs", list), _field(path, commit, "rows", dict)
    if not all(isinstance(r, str) for r in runs):
        raise LakeError(f"{path}: field runs: expected a list of run ids")
    trajectories = rows.get("trajectories", 0)
    if not isinstance(trajectories, int) or isinstance(trajectories, bool):
        raise LakeError(f"{path}: field rows.trajectories: expected a count")
    return Commit(_field(path, commit, "writer", str), _field(path, commit, "committed_at", str),
                  _field(path, commit, "host", str), tuple(runs), trajectories)


__all__ = ["MARKER_LIMIT", "Commit", "LakeError", "read_commit", "read_marker"]
