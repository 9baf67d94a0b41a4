"""Sandboxed read-only connections, the path checks before them and the in-process readers-writer lock."""
from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

from .._file_check import WarehouseFileError, check_path_length, check_warehouse_file
from .._file_lock import (
    SANDBOX_CONFIG,
    WarehouseMissing,
    allow_only_lake,
    connect_retrying,
    default_db_path,
    lake_of,
)
from ._errors import NotAWarehouse
from ._limits import ReadLimits


class _ReadersWriterLock:
    """Many readers or one writer: DuckDB refuses a read-write open while a read-only one is live in-process."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._readers = 0
        self._writing = False

    @contextmanager
    def read(self) -> Iterator[None]:
        with self._cond:
            self._cond.wait_for(lambda: not self._writing)
            self._readers += 1
        try:
            yield
        finally:
            with self._cond:
                self._readers -= 1
                self._cond.notify_all()

    @contextmanager
    def write(self) -> Iterator[None]:
        with self._cond:
            self._cond.wait_for(lambda: not self._writing and self._readers == 0)
            self._writing = True
        try:
            yield
        finally:
            with self._cond:
                self._writing = False
                self._cond.notify_all()


PROCESS_LOCK = _ReadersWriterLock()


def write_lock():
    """Hold while this process writes the warehouse, so none of its read connections is open meanwhile."""
    return PROCESS_LOCK.write()


def resolve_path(path: str | Path | None) -> Path:
    """The warehouse path; WarehouseMissing or NotAWarehouse when nothing readable is there."""
    path = Path(path) if path else default_db_path()
    try:
        check_path_length(path)
    except WarehouseFileError as exc:
        raise NotAWarehouse(str(exc)) from None
    if path.is_dir():
        raise NotAWarehouse(f"{path}: is a directory, not a warehouse file")
    if not path.exists():
        raise WarehouseMissing(
            f"{path}: no warehouse here yet; create one with `trajscope ingest LOG --db {path}` or `make demo`"
        )
    try:
        check_warehouse_file(path)
    except NotAWarehouse:
        raise
    except WarehouseFileError as exc:
        raise NotAWarehouse(str(exc)) from None
    return path


def not_our_schema(path: Path) -> NotAWarehouse:
    """The refusal of a DuckDB file that holds no trajscope schema (no schema_migrations table)."""
    return NotAWarehouse(f"{path}: is a DuckDB database but not a trajscope warehouse (no schema_migrations "
                         f"table); create one with `trajscope ingest LOG --db NEW.duckdb`")


def not_a_database(path: Path, exc: duckdb.Error) -> NotAWarehouse | None:
    """The NotAWarehouse for an open that failed on the file itself (not a database, unreadable), else None."""
    if not isinstance(exc, duckdb.IOException):
        return None
    first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    if "not a valid duckdb database file" in first.lower():
        return NotAWarehouse(f"{path}: not a DuckDB database file, so not a warehouse")
    return NotAWarehouse(f"{path}: cannot be opened as a warehouse ({first})")


def connect_sandboxed(path: Path, limits: ReadLimits, temp_directory: Path) -> duckdb.DuckDBPyConnection:
    """A read-only sandboxed connection carrying limits' memory, temp-disk and thread settings.

    A lake's catalog (warehouse.lake) may read its lake's Parquet files and nothing else; user SQL still
    cannot name a file (the statement check refuses every file function).
    """
    lake = lake_of(path)
    # The sandbox settings first: DuckDB refuses temp_directory when it comes before them.
    config = {**SANDBOX_CONFIG, **limits.duckdb_config(str(temp_directory))}
    if lake is not None:
        config = {k: v for k, v in config.items() if k not in ("enable_external_access", "lock_configuration")}
    try:
        con = connect_retrying(path, limits.lock_wait_s, read_only=True, config=config)
        return con if lake is None else allow_only_lake(con, lake)
    except NotAWarehouse:
        raise
    except WarehouseFileError as exc:
        raise NotAWarehouse(str(exc)) from None
    except duckdb.Error as exc:
        refused = not_a_database(path, exc)
        if refused is not None:
            raise refused from None
        raise


__all__ = ["PROCESS_LOCK", "connect_sandboxed", "lake_of", "not_a_database", "not_our_schema", "resolve_path",
           "write_lock"]
