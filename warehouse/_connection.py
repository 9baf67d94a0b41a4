"""Opening the warehouse: short-lived connections that wait out DuckDB's file lock, and the sandbox settings."""
from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

from ._schema import migrate
from ._transaction import transaction

DEFAULT_DB = "trajscope.duckdb"
LOCK_TIMEOUT_S = 60.0


class WarehouseBusy(RuntimeError):
    """The warehouse file stayed locked by another process past the timeout."""


class WarehouseMissing(FileNotFoundError):
    """A read-only open of a warehouse file that does not exist."""


def default_db_path() -> Path:
    """$TRAJSCOPE_DB, else ./trajscope.duckdb."""
    return Path(os.environ.get("TRAJSCOPE_DB", DEFAULT_DB))


def _is_lock_error(exc: Exception) -> bool:
    text = str(exc).lower()
    return "lock" in text and ("conflicting" in text or "could not set lock" in text)


def connect_retrying(path: Path, timeout_s: float, **kwargs) -> duckdb.DuckDBPyConnection:
    # DuckDB lets one process hold the file at a time (readers included), so every open waits
    # for the holder's single operation to finish rather than failing at once.
    deadline = time.monotonic() + timeout_s
    delay = 0.05
    while True:
        try:
            return duckdb.connect(str(path), **kwargs)
        except duckdb.IOException as exc:
            if not _is_lock_error(exc):
                raise
            if time.monotonic() >= deadline:
                raise WarehouseBusy(
                    f"{path}: the warehouse is locked by another process (a run ingesting or "
                    f"another command) and stayed locked for {timeout_s:.0f}s; try again shortly"
                ) from None
            time.sleep(delay)
            delay = min(delay * 2, 0.5)


@contextmanager
def open_warehouse(
    path: str | Path | None = None, *, timeout_s: float = LOCK_TIMEOUT_S, memory_limit: str = "1GB"
) -> Iterator[duckdb.DuckDBPyConnection]:
    """Read-write connection for one operation; creates and migrates the file as needed."""
    path = Path(path) if path else default_db_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    # Insertion order is never relied on (positions are explicit columns); dropping it lets
    # DuckDB stream large loads within the memory limit.
    con = connect_retrying(
        path, timeout_s, config={"memory_limit": memory_limit, "preserve_insertion_order": False}
    )
    try:
        migrate(con)
        yield con
    finally:
        con.close()


SANDBOX_CONFIG = {
    "enable_external_access": False,
    "autoload_known_extensions": False,
    "autoinstall_known_extensions": False,
    "allow_community_extensions": False,
    "lock_configuration": True,
}


@contextmanager
def open_readonly(
    path: str | Path | None = None,
    *,
    timeout_s: float = LOCK_TIMEOUT_S,
    sandboxed: bool = True,
    memory_limit: str = "1GB",
    threads: int | None = None,
) -> Iterator[duckdb.DuckDBPyConnection]:
    """Read-only connection; sandboxed: no file or network access, no extensions, settings locked."""
    path = Path(path) if path else default_db_path()
    if not path.exists():
        raise WarehouseMissing(
            f"{path}: no warehouse here yet; create one with `trajscope ingest LOG --db {path}` "
            f"or `make demo`"
        )
    config: dict[str, object] = {"memory_limit": memory_limit}
    if threads:
        config["threads"] = threads
    if sandboxed:
        config.update(SANDBOX_CONFIG)
    con = connect_retrying(path, timeout_s, read_only=True, config=config)
    try:
        yield con
    finally:
        con.close()



__all__ = [
    "DEFAULT_DB", "LOCK_TIMEOUT_S", "SANDBOX_CONFIG", "WarehouseBusy", "WarehouseMissing", "connect_retrying",
    "default_db_path", "open_readonly", "open_warehouse", "transaction",
]
