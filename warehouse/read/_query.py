"""run_read_query: the one query function for SQL a user can influence, and for the app's own reads."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import polars as pl
import pyarrow as pa

from .._connection import WarehouseBusy
from ._errors import ForbiddenStatement, LimitExceeded, NotAWarehouse, QueryTimeout, ReadRefused
from ._fetch import Fetched
from ._limits import DEFAULT_LIMITS, ReadLimits
from ._open import resolve_path
from ._session import open_read
from ._statement import check_statement
from ._tempdir import private_temp_dir
from ._upgrade import upgrade_or_refuse

# The worker starts from warehouse.read._worker without running the packages' __init__ (the loader,
# polars, msgspec: over a second of start-up on a busy machine); it needs duckdb and pyarrow only.
_BOOTSTRAP = """
import sys, types
from importlib.machinery import ModuleSpec
for name in ("warehouse", "warehouse.read"):
    module = types.ModuleType(name)
    module.__path__ = [sys.argv[1] + "/" + name.replace(".", "/")]
    module.__spec__ = ModuleSpec(name, None, is_package=True)
    module.__spec__.submodule_search_locations = module.__path__
    sys.modules[name] = module
from warehouse.read._worker import main
main()
"""
# Seconds a worker gets beyond the query's own time limit and lock wait: interpreter start-up, writing.
_WORKER_GRACE_S = 10.0
_PACKAGE_ROOT = Path(__file__).resolve().parents[2]
# Query workers one process (a dashboard server, many tabs) runs at once; more wait for a slot up to the
# lock wait, then are refused. Each worker may take its memory limit plus the interpreter (see _limits).
MAX_WORKERS = max(1, int(os.environ.get("TRAJSCOPE_MAX_QUERY_WORKERS") or 4))
_worker_slots = threading.BoundedSemaphore(MAX_WORKERS)


class QueryWorkersBusy(ReadRefused):
    """Every query-worker slot of this process stayed taken past the wait."""


@dataclass(frozen=True)
class ReadResult:
    """Rows (at most the row cap), whether more existed, and what ran."""

    sql: str
    df: pl.DataFrame
    truncated: bool
    seconds: float
    n_bytes: int = 0
    as_text: tuple[str, ...] = ()  # columns shown as text (INTERVAL, UNION, BIT, TIMETZ, BIGNUM)


def to_polars(table: pa.Table) -> pl.DataFrame:
    """A polars frame of an Arrow table; a type polars cannot take is a one-line refusal."""
    try:
        return pl.from_arrow(table)  # type: ignore[return-value]
    except BaseException as exc:  # noqa: BLE001 - polars panics (a BaseException) on some Arrow types
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        raise ReadRefused(f"the result has a column type the tables cannot show ({str(exc).splitlines()[0]})") \
            from None


def _in_worker(path: Path, statement: str, limits: ReadLimits) -> Fetched:
    if not _worker_slots.acquire(timeout=limits.lock_wait_s):
        raise QueryWorkersBusy(
            f"busy: {MAX_WORKERS} queries are already running here (the most at once, "
            f"$TRAJSCOPE_MAX_QUERY_WORKERS) and none finished within {limits.lock_wait_s:g} s; try again shortly")
    try:
        return _run_worker(path, statement, limits)
    finally:
        _worker_slots.release()


def _run_worker(path: Path, statement: str, limits: ReadLimits) -> Fetched:
    with private_temp_dir() as folder:
        # Absolute: the worker runs in its own temp directory, where a relative --db names nothing.
        request = {"db": str(path.absolute()), "shown_db": str(path), "sql": statement, "folder": str(folder),
                   "limits": limits.__dict__}
        proc = subprocess.Popen([sys.executable, "-c", _BOOTSTRAP, str(_PACKAGE_ROOT)], stdin=subprocess.PIPE,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=str(folder))
        try:
            _, stderr = proc.communicate(json.dumps(request).encode(),
                                         timeout=limits.timeout_s + limits.lock_wait_s + _WORKER_GRACE_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise QueryTimeout(f"stopped: the query ran past the time limit of {limits.timeout_s:g} s") from None
        status_file = folder / "status.json"
        if not status_file.exists():
            # No status: the worker died, which the address-space bound does to a runaway allocation.
            raise LimitExceeded(
                f"stopped: the query needed more memory than the limit of {limits.memory_limit_mb:g} MB "
                f"(query worker exit status {proc.returncode})", limit="memory_limit_mb"
            )
        status = json.loads(status_file.read_text())
        if not status["ok"]:
            kind, message = status["kind"], status["message"]
            if kind == "limit":
                if status["limit"] == "timeout_s":
                    raise QueryTimeout(message)
                raise LimitExceeded(message, limit=status["limit"])
            if kind == "busy":
                raise WarehouseBusy(message)
            if kind == "ForbiddenStatement":
                raise ForbiddenStatement(message)
            if kind == "NotAWarehouse":
                raise NotAWarehouse(message)
            raise ReadRefused(f"query failed: {message}" if kind == "duckdb" else message)
        # Read into memory (not a memory map): the folder is removed on return.
        with pa.OSFile(str(folder / "result.arrow"), "rb") as source:
            table = pa.ipc.open_file(source).read_all()
        return Fetched(table, status["truncated"], status["n_bytes"], tuple(status["as_text"]))


def run_read_query(path: str | Path | None, sql: str, *, limits: ReadLimits = DEFAULT_LIMITS,
                   isolated: bool = True) -> ReadResult:
    """Check sql (one SELECT, by DuckDB's parser), then run it on an up-to-date warehouse in the sandbox.

    isolated: in a query worker process whose memory is bounded (any SQL a user wrote); otherwise on
    an in-process connection (the app's own queries). Raises ReadRefused subclasses with one-line
    messages, WarehouseMissing, WarehouseBusy.
    """
    statement = check_statement(sql)
    path = resolve_path(path)
    started = time.perf_counter()
    if isolated:
        upgrade_or_refuse(path, timeout_s=limits.lock_wait_s, limits=limits)
        fetched = _in_worker(path, statement, limits)
    else:
        with open_read(path, limits=limits) as reader:
            fetched = reader.fetch(statement)
    return ReadResult(sql=statement, df=to_polars(fetched.table), truncated=fetched.truncated,
                      seconds=time.perf_counter() - started, n_bytes=fetched.n_bytes, as_text=fetched.as_text)


__all__ = ["MAX_WORKERS", "QueryWorkersBusy", "ReadResult", "run_read_query", "to_polars"]
