"""A lake's catalog: a local DuckDB file for one snapshot of the lake (the writers committed when it was built),
whose tables are views over those writers' Parquet files, with the derived tables computed once and the named
views on top."""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import time
import uuid
from collections.abc import Sequence
from pathlib import Path

import duckdb

from .._connection import open_warehouse
from .._derived import DERIVED, recompute_facts, refresh_facts
from .._file_lock import lake_of
from .._schema import schema_stamp
from ._layout import LAKE_FORMAT, LakeTable, check_lake, committed_writers, lake_tables

LAKE_SIDECAR_SUFFIX = ".lake"  # beside the catalog: the lake folder its views read (the sandbox allows it)
_WRITERS_SUFFIX = ".writers"  # beside the catalog: its code key and writers, so a later snapshot can start from it
# Shared tables whose new rows change stored trajectories' derived facts in ways the refresh below follows
# (warehouse/load/funnel_refresh_{questions,chunks}.sql); new rows in any other shared table rebuild whole.
_FOLLOWED_SHARED = ("questions", "chunks")
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


def _code_key() -> str:
    text = "\0".join([str(LAKE_FORMAT), str(_CATALOG_FORMAT), schema_stamp()])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _snapshot_key(writers: Sequence[str]) -> str:
    return hashlib.sha256("\0".join([_code_key(), *writers]).encode()).hexdigest()[:16]


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


def _written(path: Path) -> Path:
    return path.with_name(path.name + _WRITERS_SUFFIX)


class _Base:
    """A catalog this code built for a snapshot whose writers are all in the new one: its file, writers and tables."""

    def __init__(self, path: Path, writers: list[str], tables: list[LakeTable]):
        self.path, self.writers, self.tables = path, writers, tables


def _base_for(path: Path, writers: Sequence[str]) -> _Base | None:
    """The catalog of this code with the most writers, all of them among `writers` (a snapshot this one extends)."""
    best: _Base | None = None
    wanted = set(writers)
    for side in path.parent.glob(f"catalog-*.duckdb{_WRITERS_SUFFIX}"):
        try:
            held = json.loads(side.read_text())
            if held["code"] != _code_key() or not set(held["writers"]) <= wanted:
                continue
            tables = [LakeTable(name, tuple((c, t) for c, t in cols)) for name, cols in held["tables"].items()]
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            continue  # unreadable, or from an older build: not a base
        catalog = side.with_name(side.name.removesuffix(_WRITERS_SUFFIX))
        if catalog.is_file() and (best is None or len(held["writers"]) > len(best.writers)):
            best = _Base(catalog, list(held["writers"]), tables)
    return best


def _added_views(con: duckdb.DuckDBPyConnection, lake: Path, tables: list[LakeTable], added: list[str]) -> None:
    con.execute("ATTACH IF NOT EXISTS ':memory:' AS added")
    for table in tables:
        con.execute(table.view_sql(lake, f"added.main.{table.name}", writers=added))


def _touched_sql(tables: list[LakeTable]) -> str:
    """The stored trajectories whose derived facts the added writers' rows can change: their own (any row naming
    the trajectory or its run), those asking a question they added, those with a gold passage in a chunk they added."""
    parts = [f"SELECT trajectory_id FROM added.main.{t.name}" for t in tables if "trajectory_id" in t.column_names]
    parts += [f"SELECT t.trajectory_id FROM trajectories t JOIN added.main.{t.name} r USING (run_id)"
              for t in tables if "run_id" in t.column_names and "trajectory_id" not in t.column_names]
    parts.append("SELECT t.trajectory_id FROM trajectories t JOIN added.main.questions q "
                 "ON q.dataset = t.dataset AND q.question_id = t.question_id")
    parts.append("SELECT g.trajectory_id FROM gold_evidence_facts g JOIN trajectories t USING (trajectory_id) "
                 "JOIN added.main.chunks c ON c.dataset = t.dataset AND c.chunk_id = g.chunk_id")
    return "SELECT DISTINCT trajectory_id FROM (" + " UNION ALL ".join(parts) + ")"


def _extend(con: duckdb.DuckDBPyConnection, lake: Path, tables: list[LakeTable], added: list[str]) -> bool:
    """Refresh the copied catalog's derived tables for what the added writers touch; False when they added shared
    rows the refresh does not follow (the caller then computes every trajectory's)."""
    _added_views(con, lake, tables, added)
    try:
        for table in tables:
            if table.shared and table.name not in _FOLLOWED_SHARED and \
                    con.execute(f"SELECT count(*) FROM (SELECT 1 FROM added.main.{table.name} LIMIT 1)").fetchone()[0]:
                return False
        touched = _touched_sql(tables)
        for derived in DERIVED:  # in order: each reads those before it
            refresh_facts(con, derived, touched)
        return True
    finally:
        con.execute("DETACH added")


def _build(path: Path, lake: Path, writers: Sequence[str]) -> None:
    # Built beside, then moved into place: a process reading an older catalog keeps a whole file.
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    base = _base_for(path, writers)
    try:
        if base is not None:
            # Its bytes, not its rows re-inserted (1.3 s of a 3 s build at 100k). Reading it here may drop this
            # process's DuckDB lock on it (docs/security.md); a catalog is only ever opened read-only.
            try:
                shutil.copyfile(base.path, tmp)
            except FileNotFoundError:  # superseded and removed by another reader since: build it whole
                base = None
                tmp.unlink(missing_ok=True)
        with open_warehouse(tmp) as con:  # the schema and every named view; from scratch, over empty tables
            tables = lake_tables(con) if base is None else base.tables
            for table in tables:
                if base is None:
                    con.execute(f"DROP TABLE {table.name}")
                con.execute(table.view_sql(lake, writers=writers))
            # The derived tables stay tables, filled by the load SQL a warehouse runs: computed per query, they
            # made each lake page up to 10x slower than the file's (BENCHMARKS.md, session 16). A snapshot that
            # adds writers to one built before starts from its file and refreshes what the new writers touch.
            added = [] if base is None else [w for w in writers if w not in set(base.writers)]
            if base is None or not _extend(con, lake, tables, added):
                for derived in DERIVED:
                    recompute_facts(con, derived)
            con.execute("CHECKPOINT")
        _sidecar(tmp).write_text(str(lake))
        _written(tmp).write_text(json.dumps({"code": _code_key(), "writers": list(writers),
                                             "tables": {t.name: t.columns for t in tables}}))
        os.replace(_sidecar(tmp), _sidecar(path))
        os.replace(_written(tmp), _written(path))
        os.replace(tmp, path)
    finally:
        for leftover in (tmp, tmp.with_name(tmp.name + ".wal"), _sidecar(tmp), _written(tmp)):
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
