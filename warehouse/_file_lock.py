"""DuckDB's file lock and the sandbox settings: what every open needs, importing nothing else of the warehouse
(the query worker process starts from here)."""
from __future__ import annotations

import os
import time
from pathlib import Path

import duckdb

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
    config = dict(kwargs.pop("config", None) or {})
    lock = config.pop("lock_configuration", False)
    while True:
        try:
            con = duckdb.connect(str(path), config=config, **kwargs)
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
            continue
        try:
            # DuckDB draws a progress bar on stdout for queries over 2 s: it would land inside a CSV
            # or JSON that `trajscope sql` / `export` writes there. It is a session setting, so it
            # is set before the configuration is locked, with no statement of the caller's between.
            con.execute("SET enable_progress_bar = false")
            if lock:
                con.execute("SET lock_configuration = true")
        except BaseException:
            con.close()
            raise
        return con


SANDBOX_CONFIG = {
    "enable_external_access": False,
    "autoload_known_extensions": False,
    "autoinstall_known_extensions": False,
    "allow_community_extensions": False,
    "lock_configuration": True,
}


__all__ = [
    "DEFAULT_DB", "LOCK_TIMEOUT_S", "SANDBOX_CONFIG", "WarehouseBusy", "WarehouseMissing", "connect_retrying",
    "default_db_path",
]
