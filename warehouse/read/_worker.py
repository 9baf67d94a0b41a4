"""A query worker: one sandboxed query in its own process, its address space bounded by the limits.

DuckDB's memory limit does not cover the vectors a query builds (one 2,048-row vector of 400 kB rows
is 800 MB), so user SQL runs here and a runaway value costs this process, never the server.
Reads a JSON request on stdin; writes result.arrow and status.json into the request's directory, and a
line on stdout at each phase (OPENED once the warehouse is open, FETCHED once the rows are in), so the
caller can hold each phase to its own deadline.
"""
from __future__ import annotations

import json
import resource
import sys
import time
from pathlib import Path

import duckdb
import pyarrow as pa

from .._file_check import open_failure
from .._file_lock import WarehouseBusy
from ._errors import LimitExceeded, ReadRefused
from ._fetch import fetch_bounded, limit_error
from ._limits import (
    WORKER_BASE_ADDRESS_SPACE_MB,
    ReadLimits,
    inherited_address_space_mb,
    mb_text,
    worker_address_space_mb,
)
from ._open import connect_sandboxed

OPENED = "opened"
FETCHED = "fetched"


def address_space_bytes(limits: ReadLimits) -> int:
    """The worker's RLIMIT_AS: what the limits ask for, or the inherited limit (ulimit -v) where lower."""
    inherited = inherited_address_space_mb()
    asked = worker_address_space_mb(limits)
    return int(min(asked, inherited) * 2**20) if inherited is not None else int(asked * 2**20)


def address_space_stop(limits: ReadLimits, cap_mb: float | None = None) -> LimitExceeded:
    """The stop at the worker's address-space limit, saying which figure bound it and where it came from."""
    asked = worker_address_space_mb(limits)
    cap_mb = address_space_bytes(limits) / 2**20 if cap_mb is None else cap_mb
    parts = (f"{WORKER_BASE_ADDRESS_SPACE_MB:,} MB for the interpreter + the memory limit of "
             f"{limits.memory_limit_mb:,} MB + twice the result limit of {mb_text(limits.max_result_mb)} MB")
    if cap_mb < asked:
        return LimitExceeded(
            f"stopped: the query worker ran out of address space at {cap_mb:,.0f} MB, the limit this process "
            f"inherited (ulimit -v), which is below the {asked:,.0f} MB these limits ask for ({parts}); raise "
            "ulimit -v, or lower --memory-limit-mb or --max-result-mb to fit under it", limit="address_space")
    return LimitExceeded(
        f"stopped: the query worker reached its address-space limit of {cap_mb:,.0f} MB ({parts}): one value or "
        "vector passed what DuckDB's memory limit counts; raise --memory-limit-mb or --max-result-mb, which raise "
        "it, or narrow the query", limit="address_space")


def memory_stop(exc: BaseException, limits: ReadLimits) -> LimitExceeded | None:
    """Which limit an out-of-memory error in the worker met: DuckDB's own (its message reports its buffer
    pool as used/limit), the temp-disk limit, or else the worker's address-space limit (an allocation the
    operating system refused); None for any other error."""
    refused = exc if isinstance(exc, LimitExceeded) else limit_error(exc, limits)
    return refused if refused is None else _which_memory(refused, limits)


def _which_memory(refused: LimitExceeded, limits: ReadLimits) -> LimitExceeded:
    if refused.limit != "memory_limit_mb" or " used)" in refused.detail:
        return refused  # DuckDB's buffer manager says "... (1023.9 MiB/1.0 GiB used)"
    return address_space_stop(limits)


def _status(folder: Path, **fields: object) -> None:
    (folder / "status.json").write_text(json.dumps(fields))


def _phase(name: str) -> None:
    sys.stdout.write(name + "\n")
    sys.stdout.flush()


def main() -> None:
    request = json.loads(sys.stdin.read())
    folder = Path(request["folder"])
    limits = ReadLimits(**request["limits"])
    cap = address_space_bytes(limits)
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    started = time.perf_counter()
    try:
        con = connect_sandboxed(Path(request["db"]), limits, folder / "spill")
        try:
            _phase(OPENED)
            fetched = fetch_bounded(con, request["sql"], limits)
        finally:
            con.close()
        _phase(FETCHED)
        with pa.OSFile(str(folder / "result.arrow"), "wb") as sink, \
                pa.ipc.new_file(sink, fetched.table.schema) as writer:
            writer.write_table(fetched.table)
        _status(folder, ok=True, truncated=fetched.truncated, n_bytes=fetched.n_bytes,
                as_text=list(fetched.as_text), seconds=time.perf_counter() - started)
    except LimitExceeded as exc:
        exc = _which_memory(exc, limits)  # fetch_bounded names DuckDB's limit for every out-of-memory
        _status(folder, ok=False, kind="limit", limit=exc.limit, message=str(exc))
    except ReadRefused as exc:
        _status(folder, ok=False, kind=type(exc).__name__, message=str(exc))
    except WarehouseBusy as exc:
        _status(folder, ok=False, kind="busy", message=str(exc))
    except MemoryError:  # Python's own allocation refused: only the address-space limit does that here
        refused = address_space_stop(limits)
        _status(folder, ok=False, kind="limit", limit=refused.limit, message=str(refused))
    except duckdb.Error as exc:  # a DuckDB error the user's SQL caused: one line back
        stopped = memory_stop(exc, limits)
        damaged = open_failure(Path(request.get("shown_db") or request["db"]), exc)
        if stopped is not None:
            _status(folder, ok=False, kind="limit", limit=stopped.limit, message=str(stopped))
        elif damaged is not None:  # a corrupt block met while reading: the file, not the query
            _status(folder, ok=False, kind="NotAWarehouse", message=str(damaged))
        else:
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            _status(folder, ok=False, kind="duckdb", message=first)
    except Exception as exc:  # noqa: BLE001 - a fault of this code, reported as one, not as the user's
        _status(folder, ok=False, kind="internal", message=f"internal error in the query worker: "
                f"{type(exc).__name__}: {exc}")


if __name__ == "__main__":
    main()
