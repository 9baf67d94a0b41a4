"""Opening the warehouse: short-lived connections that wait out DuckDB's file lock, and the sandbox settings."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

from ._file_check import WarehouseFileError
from ._file_lock import (
    DEFAULT_DB,
    LOCK_TIMEOUT_S,
    SANDBOX_CONFIG,
    WarehouseBusy,
    WarehouseMissing,
    allow_only_lake,
    connect_retrying,
    default_db_path,
    lake_of,
)
from ._schema import latest_schema_version, migrate, schema_version
from ._transaction import transaction


def check_schema(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    """WarehouseFileError for a DuckDB file that is not ours (tables, no schema_migrations) or newer than this code."""
    tables = sorted({r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()})
    if tables and "schema_migrations" not in tables:
        shown = ", ".join(tables[:5]) + (f" and {len(tables) - 5} more" if len(tables) > 5 else "")
        raise WarehouseFileError(
            f"{path}: is a DuckDB database but not a trajscope warehouse (it has table(s) {shown} and no "
            "schema_migrations); give another --db, nothing was written to this one")
    if tables:
        version, latest = schema_version(con), latest_schema_version()
        if version > latest:
            raise WarehouseFileError(
                f"{path}: has schema version {version}, newer than this trajscope's {latest}; upgrade trajscope "
                "to write it")


# Nothing a transaction writes reaches the file before its commit, and the commit goes through the WAL
# first, so a load that fails (a full disk included) leaves the file's bytes as they were; measured with
# DuckDB 2.0, where both defaults write a large load straight into the file. Insertion order is never
# relied on (positions are explicit columns); dropping it lets DuckDB stream large loads.
WRITE_CONFIG: dict[str, object] = {
    "preserve_insertion_order": False,
    "enable_optimistic_write": False,
    "auto_checkpoint_skip_wal_threshold": 2**62,
}


NEW_FILE_CHECKPOINT = "256MB"


@contextmanager
def open_warehouse(
    path: str | Path | None = None, *, timeout_s: float = LOCK_TIMEOUT_S, memory_limit: str = "1GB",
    new_file: bool = False,
) -> Iterator[duckdb.DuckDBPyConnection]:
    """Read-write connection for one operation; creates and migrates the file as needed. `new_file`: the caller
    created the file and removes it if its write fails, so there are no bytes to keep and rows are written once,
    straight into the file (DuckDB's optimistic writes), instead of through the WAL; the caller checkpoints it."""
    path = Path(path) if path else default_db_path()
    # A new file keeps DuckDB's own defaults for the two settings that hold writes out of the file.
    held_out = ("enable_optimistic_write", "auto_checkpoint_skip_wal_threshold") if new_file else ()
    config = {"memory_limit": memory_limit, **{k: v for k, v in WRITE_CONFIG.items() if k not in held_out}}
    if new_file:
        # Its writer commits batch by batch and checkpoints at the end. DuckDB checkpoints at every commit that
        # writes more than the threshold (16 MB), and a checkpoint's cost grows with the file (0.75 s a 48 MB
        # batch by 100k trajectories); what waits for the next one is held in the WAL and in memory, so one
        # every few batches.
        config["checkpoint_threshold"] = NEW_FILE_CHECKPOINT
    con = connect_retrying(path, timeout_s, config=config)
    try:
        check_schema(con, path)
        migrate(con)
        yield con
    finally:
        con.close()


@contextmanager
def open_readonly(
    path: str | Path | None = None,
    *,
    timeout_s: float = LOCK_TIMEOUT_S,
    sandboxed: bool = True,
    memory_limit: str = "1GB",
    threads: int | None = None,
) -> Iterator[duckdb.DuckDBPyConnection]:
    """Read-only raw connection, for the tests' own inspection of a file; sandboxed: no file or network access,
    no extensions, settings locked. The product reads through warehouse.open_read (tests/test_read_entry_point.py)."""
    path = Path(path) if path else default_db_path()
    if not path.exists():
        raise WarehouseMissing(
            f"{path}: no warehouse here yet; create one with `trajscope ingest LOG --db {path}` "
            f"or `make demo`"
        )
    config: dict[str, object] = {"memory_limit": memory_limit}
    if threads:
        config["threads"] = threads
    lake = lake_of(path) if sandboxed else None
    if sandboxed:
        config.update(SANDBOX_CONFIG)
    if lake is not None:  # a lake's catalog: sandboxed after the open, to the lake's folder
        config = {k: v for k, v in config.items() if k not in ("enable_external_access", "lock_configuration")}
    con = connect_retrying(path, timeout_s, read_only=True, config=config)
    if lake is not None:
        allow_only_lake(con, lake)
    try:
        yield con
    finally:
        con.close()



__all__ = [
    "DEFAULT_DB", "LOCK_TIMEOUT_S", "SANDBOX_CONFIG", "WRITE_CONFIG", "WarehouseBusy", "WarehouseFileError",
    "WarehouseMissing",
    "check_schema", "connect_retrying", "default_db_path", "open_readonly", "open_warehouse", "transaction",
]
