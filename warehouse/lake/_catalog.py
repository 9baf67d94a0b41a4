"""A lake's catalog: a local DuckDB file for one snapshot of the lake (the writers committed when it was built),
whose tables are views over those writers' Parquet files, with the derived tables computed once and the named
views on top."""
from __future__ import annotations

import fcntl
import hashlib
import os
import time
import uuid
from collections.abc import Sequence
from pathlib import Path

from .._connection import open_warehouse
from .._derived import DERIVED, recompute_facts
from .._file_lock import lake_of
from .._schema import schema_stamp
from ._layout import LAKE_FORMAT, check_lake, committed_writers, lake_tables

LAKE_SIDECAR_SUFFIX = ".lake"  # beside the catalog: the lake folder its views read (the sandbox allows it)
# Bumped when what a catalog holds changes in a way schema_stamp() does not see (the layout of its views).
_CATALOG_FORMAT = 2
# A superseded catalog is removed this long after its last change: a reader that resolved it just before a
# new one was built still opens it.
_SUPERSEDED_KEEP_S = 600.0


def _cache_root() -> Path:
    return Path(os.environ.get("TRAJSCOPE_CACHE") or Path.home() / ".cache" / "trajscope") / "lakes"


def _lake_dir(lake: Path) -> Path:
    key = hashlib.sha256(str(lake).encode()).hexdigest()[:16]
    return _cache_root() / f"{lake.name or 'lake'}-{key}"


def _snapshot_key(writers: Sequence[str]) -> str:
    text = "\0".join([str(LAKE_FORMAT), str(_CATALOG_FORMAT), schema_stamp(), *writers])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def catalog_path(lake: Path, writers: Sequence[str] | None = None) -> Path:
    """Where this machine keeps the catalog of a lake's snapshot (the given writers, else those committed now):
    one file per snapshot and code version, in $TRAJSCOPE_CACHE/lakes/<lake>-<hash>/."""
    if writers is None:
        writers = committed_writers(lake)
    return _lake_dir(lake) / f"catalog-{_snapshot_key(writers)}.duckdb"


def _sidecar(path: Path) -> Path:
    return path.with_name(path.name + LAKE_SIDECAR_SUFFIX)


def _current(path: Path, lake: Path) -> bool:
    # The file's name says which snapshot and code built it; its sidecar is in place before it is.
    return path.is_file() and lake_of(path) == lake


def _build(path: Path, lake: Path, writers: Sequence[str]) -> None:
    # Built beside, then moved into place: a process reading an older catalog keeps a whole file.
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    try:
        with open_warehouse(tmp) as con:  # the schema and every named view, over empty tables
            for table in lake_tables(con):
                con.execute(f"DROP TABLE {table.name}")
                con.execute(table.view_sql(lake, writers=writers))
            # The derived tables stay tables, filled once by the load SQL a warehouse runs: computed per query,
            # they made each lake page up to 10x slower than the file's (BENCHMARKS.md, session 16).
            for derived in DERIVED:
                recompute_facts(con, derived)
            con.execute("CHECKPOINT")
        _sidecar(tmp).write_text(str(lake))
        os.replace(_sidecar(tmp), _sidecar(path))
        os.replace(tmp, path)
    finally:
        for leftover in (tmp, tmp.with_name(tmp.name + ".wal"), _sidecar(tmp)):
            leftover.unlink(missing_ok=True)


def _remove_superseded(current: Path) -> None:
    # Only once the current file is old enough that whoever resolved an older snapshot has opened it by now.
    try:
        if current.stat().st_mtime > time.time() - _SUPERSEDED_KEEP_S:
            return
    except FileNotFoundError:
        return
    for old in current.parent.glob("catalog*.duckdb*"):
        if not old.name.startswith(current.name):
            old.unlink(missing_ok=True)


def lake_catalog_built(lake: str | Path) -> bool:
    """Whether the catalog of the lake's current snapshot is already on this machine (lake_catalog will not build)."""
    lake = check_lake(Path(lake))
    return _current(catalog_path(lake), lake)


def lake_catalog(lake: str | Path) -> Path:
    """The catalog file to open as a warehouse (`--db`) to read the lake as it is now; built when missing.

    It reads the writers committed when it was built: a writer that commits later makes a new snapshot, so
    the next call returns another file (built then, its derived tables computed once), and every page of one
    snapshot sees the same rows.
    """
    lake = check_lake(Path(lake))
    writers = committed_writers(lake)
    path = catalog_path(lake, writers)
    if not _current(path, lake):
        path.parent.mkdir(parents=True, exist_ok=True)
        # One build per snapshot on this machine: a second reader waits for the first's file, not building it too.
        with open(path.parent / ".build.lock", "a+") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                if not _current(path, lake):
                    _build(path, lake, writers)
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)
    _remove_superseded(path)
    return path


__all__ = ["LAKE_SIDECAR_SUFFIX", "catalog_path", "lake_catalog", "lake_catalog_built"]
