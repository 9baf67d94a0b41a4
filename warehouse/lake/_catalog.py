"""A lake's catalog: a local DuckDB file for one snapshot of the lake (the writers committed when it was built),
whose tables are views over those writers' Parquet files, with the shared tables' distinct rows and the derived
tables computed once and the named views on top."""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import time
import uuid
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path

import duckdb

from trajscope.runtime import cache_dir

from .._connection import open_warehouse
from .._derived import DERIVED, UPSERT_KEYS, recompute_facts, refresh_facts, upsert_refresh_sql
from .._file_lock import lake_of
from .._schema import schema_stamp
from ._layout import LAKE_FORMAT, LakeTable, committed_writers, lake_tables
from ._remote import readable_lake

LAKE_SIDECAR_SUFFIX = ".lake"  # beside the catalog: the lake folder its views read (the sandbox allows it)
_WRITERS_SUFFIX = ".writers"  # beside the catalog: its code key and writers, so a later snapshot can start from it
# Shared tables whose new rows change stored trajectories' derived facts in ways the refresh below follows
# (an ingest's upsert refresh); new rows in any other shared table rebuild whole.
_FOLLOWED_SHARED = tuple(UPSERT_KEYS)
# Shared tables a catalog stores as a table of their distinct rows rather than a view that deduplicates them on every
# read (26 ms per read of 25k questions, and nearly every page reads the questions). Not a corpus: it can be many GB,
# few views read it, and as an empty table it made DuckDB plan first_decisive_error 3x slower (BENCHMARKS.md).
_STORED_SHARED = ("questions",)
# Bumped when what a catalog holds changes in a way schema_stamp() does not see (the layout of its views).
_CATALOG_FORMAT = 3
# A superseded catalog is removed this long after its last change: a reader that resolved it just before a
# new one was built still opens it.
_SUPERSEDED_KEEP_S = 600.0


def _cache_root() -> Path:
    return cache_dir() / "lakes"


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


def _touched(con: duckdb.DuckDBPyConnection, tables: list[LakeTable]) -> str:
    """The stored trajectories whose derived facts the added writers' rows can change, put in temp table lake_touched:
    their own (any row naming the trajectory or its run), and those an ingest's upsert of the questions and chunks
    they added would refresh (the same load files)."""
    own = [f"SELECT trajectory_id FROM added.main.{t.name}" for t in tables if "trajectory_id" in t.column_names]
    own += [f"SELECT t.trajectory_id FROM trajectories t JOIN added.main.{t.name} r USING (run_id)"
            for t in tables if "run_id" in t.column_names and "trajectory_id" not in t.column_names]
    con.execute("CREATE OR REPLACE TEMP TABLE lake_touched AS " + " UNION ALL ".join(own))
    for name, keys in UPSERT_KEYS.items():
        con.execute(f"CREATE OR REPLACE TEMP TABLE upserted_keys AS SELECT DISTINCT {', '.join(keys)} "
                    f"FROM added.main.{name}")
        con.execute(f"INSERT INTO lake_touched\n{upsert_refresh_sql(name)}")
    con.execute("DROP TABLE upserted_keys")
    return "SELECT DISTINCT trajectory_id FROM lake_touched"


def _extend(con: duckdb.DuckDBPyConnection, tables: list[LakeTable]) -> bool:
    """Refresh the copied catalog's derived tables for what the added writers (schema `added`) touch; False when
    they added shared rows the refresh does not follow (the caller then computes every trajectory's)."""
    for table in tables:
        if table.shared and table.name not in _FOLLOWED_SHARED and \
                con.execute(f"SELECT count(*) FROM (SELECT 1 FROM added.main.{table.name} LIMIT 1)").fetchall()[0][0]:
            return False
    try:
        touched = _touched(con, tables)
        for derived in DERIVED:  # in order: each reads those before it
            refresh_facts(con, derived, touched)
        return True
    finally:
        con.execute("DROP TABLE IF EXISTS lake_touched")


def _install(con: duckdb.DuckDBPyConnection, lake: Path, table: LakeTable, writers: Sequence[str],
             extending: bool) -> None:
    """A table of the catalog: a view over its writers' files, or for a _STORED_SHARED one a table of their distinct
    rows."""
    if table.name not in _STORED_SHARED:
        con.execute(table.view_sql(lake, writers=writers))
    elif extending:  # the copied catalog holds the earlier writers' rows: add the added writers' others
        con.execute(f"INSERT INTO {table.name} SELECT * FROM added.main.{table.name} EXCEPT SELECT * FROM {table.name}")
    else:
        con.execute(table.view_sql(lake, f"lake_{table.name}", writers=writers))
        con.execute(f"CREATE TABLE {table.name} AS SELECT * FROM lake_{table.name}")
        con.execute(f"DROP VIEW lake_{table.name}")


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
            # A snapshot that adds writers to one built before starts from its file and refreshes what the new
            # writers touch.
            added = [] if base is None else [w for w in writers if w not in set(base.writers)]
            if base is not None:
                _added_views(con, lake, tables, added)
            try:
                for table in tables:
                    if base is None:
                        con.execute(f"DROP TABLE {table.name}")
                    _install(con, lake, table, writers, extending=base is not None)
                # The derived tables stay tables, filled by the load SQL a warehouse runs: computed per query, they
                # made each lake page up to 10x slower than the file's (BENCHMARKS.md).
                if base is None or not _extend(con, tables):
                    for derived in DERIVED:
                        recompute_facts(con, derived)
            finally:
                if base is not None:
                    con.execute("DETACH added")
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
    """Whether the catalog of the lake's current snapshot is already on this machine (lake_catalog will not build; a
    URL's mirror is brought up to date first)."""
    lake = readable_lake(lake)
    return _current(catalog_path(lake), lake)


def lake_catalog(lake: str | Path, *, building: Callable[[], AbstractContextManager] | None = None) -> Path:
    """The catalog file to open as a warehouse (`--db`) to read the lake as it is now; built when missing.

    It reads the writers committed when it was built: a writer that commits later makes a new snapshot, so
    the next call returns another file (built then, its derived tables computed once), and every page of one
    snapshot sees the same rows. A lake at a URL is read through its local mirror (warehouse.lake._remote).
    `building()` (a spinner, say) is entered around a build, when there is one.
    """
    lake = readable_lake(lake)
    writers = committed_writers(lake)
    path = catalog_path(lake, writers)
    if not _current(path, lake):
        path.parent.mkdir(parents=True, exist_ok=True)
        # One build per snapshot on this machine: a second reader waits for the first's file, not building it too.
        with (building or contextlib.nullcontext)(), open(path.parent / ".build.lock", "a+") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                if not _current(path, lake):
                    _build(path, lake, writers)
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)
    _remove_superseded(path)
    return path


__all__ = ["LAKE_SIDECAR_SUFFIX", "catalog_path", "lake_catalog", "lake_catalog_built"]
