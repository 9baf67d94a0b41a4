"""run_read_query: the one query function for SQL a user can influence, and for the app's own reads."""
from __future__ import annotations

import json
import os
import select
import signal
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
from ._limits import DEFAULT_LIMITS, ReadLimits, check_fits_machine
from ._open import resolve_path
from ._session import open_read
from ._statement import check_statement
from ._tempdir import private_temp_dir
from ._upgrade import upgrade_or_refuse
from ._worker import FETCHED, OPENED, address_space_stop

# The worker starts from warehouse.read._worker without running the packages' __init__ (the loader,
# polars, msgspec: over a second of start-up on a busy machine); it needs duckdb and pyarrow only.
# Before anything else it asks Linux to kill it when its parent dies (PR_SET_PDEATHSIG), and exits at once
# if the parent is already gone: a killed server or CLI never leaves a query running.
_BOOTSTRAP = """
import ctypes, os, signal, sys, types
if sys.platform.startswith("linux"):
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)
    if os.getppid() != int(sys.argv[2]):
        os._exit(1)
from importlib.machinery import ModuleSpec
for name, folder in (("trajscope", None), ("trajscope.warehouse", ""), ("trajscope.warehouse.read", "/read")):
    module = types.ModuleType(name)
    module.__path__ = [] if folder is None else [sys.argv[1] + folder]
    module.__spec__ = ModuleSpec(name, None, is_package=True)
    module.__spec__.submodule_search_locations = module.__path__
    sys.modules[name] = module
from trajscope.warehouse.read._worker import main
main()
"""
# Seconds a worker gets to start (interpreter, imports) before its lock wait counts, on a loaded machine.
_STARTUP_S = 10.0
# Seconds past the time limit before a worker that did not stop when interrupted is killed (a single long
# function call, such as lpad to 2 GB, never looks at the interrupt).
_STOP_GRACE_S = 1.0
# Seconds a worker gets to write its result once fetched (at most max_result_mb of Arrow to a local file).
_WRITE_S = 30.0
_PACKAGE_ROOT = Path(__file__).resolve().parents[1]  # the trajscope.warehouse folder
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


class _Phases:
    """The worker's phase lines on its stdout (other output ignored), each awaited until a deadline."""

    def __init__(self, proc: subprocess.Popen[bytes]):
        assert proc.stdout is not None
        self._fd = proc.stdout.fileno()
        self._buffer = b""

    def next(self, deadline: float) -> str | None:
        """The next phase line, "" once the worker closed its stdout (it ended), None at the deadline."""
        while True:
            while b"\n" in self._buffer:
                line, self._buffer = self._buffer.split(b"\n", 1)
                if line.strip() in (OPENED.encode(), FETCHED.encode()):
                    return line.strip().decode()
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._fd], [], [], left)[0]:
                return None
            chunk = os.read(self._fd, 4096)
            if not chunk:
                return ""
            self._buffer += chunk


def _kill(proc: subprocess.Popen[bytes]) -> None:
    proc.kill()
    proc.wait()


def _supervise(proc: subprocess.Popen[bytes], limits: ReadLimits) -> None:
    """Hold each phase of the worker to its deadline: start-up and lock wait, the query's time limit (plus a
    second for the interrupt to land), the writing of the result; a worker past one is killed."""
    phases = _Phases(proc)
    begun = time.monotonic()
    phase = phases.next(begun + _STARTUP_S + limits.lock_wait_s)
    if phase is None:
        _kill(proc)
        raise WarehouseBusy(
            f"stopped: the query worker had not opened the warehouse after {time.monotonic() - begun:.1f} s "
            f"(start-up, then the lock wait of {limits.lock_wait_s:g} s); try again shortly")
    if phase == OPENED:
        opened = time.monotonic()
        phase = phases.next(opened + limits.timeout_s + _STOP_GRACE_S)
        if phase is None:
            killed_at = time.monotonic() - opened
            _kill(proc)
            raise QueryTimeout(
                f"stopped: the query ran past the time limit of {limits.timeout_s:g} s and did not stop when "
                f"interrupted, so its worker was killed at {killed_at:.1f} s")
    if phase == FETCHED and phases.next(time.monotonic() + _WRITE_S) is None:
        _kill(proc)
        raise ReadRefused(f"stopped: the query worker had not written its result {_WRITE_S:g} s after fetching it")
    try:
        proc.wait(timeout=_WRITE_S)
    except subprocess.TimeoutExpired:
        _kill(proc)


def _died(proc: subprocess.Popen[bytes], folder: Path, limits: ReadLimits) -> ReadRefused:
    """Why a worker that wrote no status ended: the address-space bound (a refused allocation aborts or
    kills it), or what its last error line says."""
    errors = (folder / "stderr.txt").read_text(errors="replace").strip().splitlines() \
        if (folder / "stderr.txt").exists() else []
    last = errors[-1][:300] if errors else ""
    code = proc.returncode
    if code in (-signal.SIGKILL, -signal.SIGSEGV, -signal.SIGABRT, -signal.SIGBUS) or \
            any(s in last for s in ("MemoryError", "bad_alloc", "out of memory", "Cannot allocate memory")):
        stop = address_space_stop(limits)
        return LimitExceeded(f"{stop} (query worker exit status {code})", limit=stop.limit)
    return ReadRefused(f"the query worker ended without a result (exit status {code}){': ' + last if last else ''}")


def _run_worker(path: Path, statement: str, limits: ReadLimits) -> Fetched:
    with private_temp_dir() as folder:
        # Absolute: the worker runs in its own temp directory, where a relative --db names nothing.
        request = {"db": str(path.absolute()), "shown_db": str(path), "sql": statement, "folder": str(folder),
                   "limits": limits.__dict__}
        with open(folder / "stderr.txt", "wb") as stderr:
            proc = subprocess.Popen([sys.executable, "-c", _BOOTSTRAP, str(_PACKAGE_ROOT), str(os.getpid())],
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, cwd=str(folder))
        try:
            assert proc.stdin is not None
            try:
                proc.stdin.write(json.dumps(request).encode())
                proc.stdin.close()
            except BrokenPipeError:
                pass  # it ended before reading: its exit status says why
            _supervise(proc, limits)
        finally:
            if proc.poll() is None:
                _kill(proc)
            if proc.stdout is not None:
                proc.stdout.close()
        status_file = folder / "status.json"
        if not status_file.exists():
            raise _died(proc, folder, limits)
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
    check_fits_machine(limits)
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
