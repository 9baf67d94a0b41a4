"""DuckDB's file lock and the sandbox settings: what every open needs, importing nothing else of the warehouse
(the query worker process starts from here)."""
from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import duckdb

from ._file_check import WarehouseFileError, check_path_length, check_warehouse_file, open_failure

DEFAULT_DB = "trajscope.duckdb"
LOCK_TIMEOUT_S = 60.0

# DuckDB's lock is a POSIX record lock: a process that closes any descriptor of the file loses every lock it holds
# on it, so the header check's open-read-close under another connection of this process would let a writer in
# beside it. The header is read once per file (device, inode), before this process first connects to it; the check
# and the connect attempt hold _OPENING, so no thread reads a header while another is between connect and record.
_CONNECTED: set[tuple[int, int]] = set()
_OPENING = threading.Lock()


class WarehouseBusy(RuntimeError):
    """The warehouse file stayed locked by another process past the timeout."""


class WarehouseMissing(FileNotFoundError):
    """A read-only open of a warehouse file that does not exist."""


# Set on every connection, writable ones included, before anything runs on it: a file DuckDB could read
# through an extension (SQLite, Postgres, a remote URL) must never make it download or load one.
NO_EXTENSIONS_CONFIG = {
    "autoload_known_extensions": False,
    "autoinstall_known_extensions": False,
    "allow_community_extensions": False,
}


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
    config = {**NO_EXTENSIONS_CONFIG, **dict(kwargs.pop("config", None) or {})}
    path = Path(path)
    if str(path) == ":memory:":
        return duckdb.connect(":memory:", config=config, **kwargs)
    check_path_length(path)
    if not kwargs.get("read_only"):
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise WarehouseFileError(f"{path}: cannot create its folder ({os.strerror(exc.errno or 0)})") from None
    while True:
        try:
            with _OPENING:
                opened = _identity(path)
                head_read = opened not in _CONNECTED
                try:
                    check_warehouse_file(path, create=not kwargs.get("read_only"), read_head=head_read)
                except FileNotFoundError:
                    raise WarehouseMissing(f"{path}: no warehouse here yet; create one with `trajscope ingest LOG "
                                           f"--db {path}` or `make demo`") from None
                # lock_configuration travels in the config, so the database instance DuckDB shares between
                # this process's connections is locked from its creation: no connection ever needs a SET
                # that a concurrent one's lock would refuse ("the configuration has been locked").
                con = duckdb.connect(str(path), config=config, **kwargs)
                identity = _identity(path)
                if identity is not None and (opened is None or identity == opened):
                    _CONNECTED.add(identity)
        except duckdb.Error as exc:
            if not isinstance(exc, duckdb.IOException) or not _is_lock_error(exc):
                if not head_read:  # another file now has that inode number: check its header after all
                    _CONNECTED.discard(opened)
                    continue
                refused = open_failure(path, exc)
                if refused is not None:
                    raise refused from None
                raise
            if time.monotonic() >= deadline:
                raise WarehouseBusy(
                    f"{path}: the warehouse is locked by another process (a run ingesting or "
                    f"another command) and stayed locked for {timeout_s:.0f}s; try again shortly"
                ) from None
            time.sleep(delay)
            delay = min(delay * 2, 0.5)
            continue
        if opened is not None and _identity(path) != opened:
            # An ingest's copy took the name while this opened it (warehouse._loader._load_into_copy): the lock
            # just taken may be the replaced file's, freed when that ingest let it go. Open the name again.
            con.close()
            continue
        _no_progress_bar(con)
        return con


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _no_progress_bar(con: duckdb.DuckDBPyConnection) -> None:
    # DuckDB draws a progress bar on stdout for queries over 2 s where it is on (an interactive
    # session): it would land inside a CSV or JSON that `trajscope sql` / `export` writes there. Off by
    # default otherwise; where it is on and the configuration is locked, it stays (the query worker,
    # which writes the CLI's results, has its stdout on /dev/null).
    try:
        if con.execute("SELECT current_setting('enable_progress_bar')").fetchall()[0][0]:
            con.execute("SET enable_progress_bar = false")
    except duckdb.InvalidInputException:
        pass


SANDBOX_CONFIG = {
    "enable_external_access": False,
    "autoload_known_extensions": False,
    "autoinstall_known_extensions": False,
    "allow_community_extensions": False,
    "lock_configuration": True,
}


def lake_of(path: Path) -> Path | None:
    """The lake folder a catalog file's views read (its `.lake` sidecar, see warehouse.lake), else None."""
    sidecar = path.with_name(path.name + ".lake")
    if not sidecar.is_file():
        return None
    return Path(sidecar.read_text().strip())


def allow_only_lake(con: duckdb.DuckDBPyConnection, lake: Path) -> duckdb.DuckDBPyConnection:
    """Sandbox an open connection to a lake's catalog: it may read the lake's files, nothing else."""
    # DuckDB takes allowed_directories only while external access is on, and only by SET after the open;
    # then access goes off and the settings lock, as SANDBOX_CONFIG does at the open of a plain warehouse.
    try:
        folder = (str(lake).rstrip("/") + "/").replace("'", "''")
        con.execute(f"SET allowed_directories = ['{folder}']")
        con.execute("SET enable_external_access = false")
        con.execute("SET lock_configuration = true")
    except BaseException:
        con.close()
        raise
    return con


__all__ = [
    "DEFAULT_DB", "LOCK_TIMEOUT_S", "NO_EXTENSIONS_CONFIG", "SANDBOX_CONFIG", "WarehouseBusy", "WarehouseFileError",
    "WarehouseMissing", "allow_only_lake", "connect_retrying", "default_db_path", "lake_of",
]
