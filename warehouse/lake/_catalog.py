"""A lake's catalog: a small local DuckDB file whose tables are views over the lake, with the named views on top."""
from __future__ import annotations

import hashlib
import os
import uuid
from pathlib import Path

from .._connection import open_warehouse
from .._derived import DERIVED, facts_view_sql
from .._file_lock import lake_of
from .._schema import schema_stamp
from ._layout import check_lake, lake_tables

LAKE_SIDECAR_SUFFIX = ".lake"  # beside the catalog: the lake folder its views read (the sandbox allows it)


def _cache_root() -> Path:
    return Path(os.environ.get("TRAJSCOPE_CACHE") or Path.home() / ".cache" / "trajscope") / "lakes"


def catalog_path(lake: Path) -> Path:
    """Where this machine keeps the catalog of a lake (one per lake folder, in $TRAJSCOPE_CACHE/lakes)."""
    key = hashlib.sha256(str(lake).encode()).hexdigest()[:16]
    return _cache_root() / f"{lake.name or 'lake'}-{key}" / "catalog.duckdb"


def _stamp_file(path: Path) -> Path:
    return path.with_name(path.name + ".stamp")


def _current(path: Path, lake: Path) -> bool:
    # The stamp says which schema and views built the file, so deciding needs no open of it.
    stamp = _stamp_file(path)
    return path.is_file() and lake_of(path) == lake and stamp.is_file() and stamp.read_text() == schema_stamp()


def _build(path: Path, lake: Path) -> None:
    # Built beside, then moved into place: a process reading the old catalog keeps a whole file.
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    try:
        with open_warehouse(tmp) as con:  # the schema and every named view, over empty tables
            for table in lake_tables(con):
                con.execute(f"DROP TABLE {table.name}")
                con.execute(table.view_sql(lake))
            for derived in DERIVED:
                con.execute(facts_view_sql(derived))
            con.execute("CHECKPOINT")
        tmp.with_name(tmp.name + LAKE_SIDECAR_SUFFIX).write_text(str(lake))
        os.replace(tmp.with_name(tmp.name + LAKE_SIDECAR_SUFFIX), path.with_name(path.name + LAKE_SIDECAR_SUFFIX))
        os.replace(tmp, path)
        _stamp_file(path).write_text(schema_stamp())
    finally:
        for leftover in (tmp, tmp.with_name(tmp.name + ".wal"), tmp.with_name(tmp.name + LAKE_SIDECAR_SUFFIX)):
            leftover.unlink(missing_ok=True)


def lake_catalog(lake: str | Path) -> Path:
    """The catalog file to open as a warehouse (`--db`) to read the lake; built or rebuilt when out of date.

    Its tables are views over every committed writer's Parquet files, so rows a writer adds later are
    seen without rebuilding; the file holds no data of its own.
    """
    lake = check_lake(Path(lake))
    path = catalog_path(lake)
    if not _current(path, lake):
        _build(path, lake)
    return path


__all__ = ["LAKE_SIDECAR_SUFFIX", "catalog_path", "lake_catalog"]
