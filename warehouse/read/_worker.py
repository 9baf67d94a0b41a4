"""A query worker: one sandboxed query in its own process, its address space bounded by the limits.

DuckDB's memory limit does not cover the vectors a query builds (one 2,048-row vector of 400 kB rows
is 800 MB), so user SQL runs here and a runaway value costs this process, never the server.
Reads a JSON request on stdin; writes result.arrow and status.json into the request's directory.
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
from ._limits import WORKER_BASE_ADDRESS_SPACE_MB, ReadLimits
from ._open import connect_sandboxed


def address_space_bytes(limits: ReadLimits) -> int:
    """The worker's RLIMIT_AS: interpreter and libraries, DuckDB's memory limit, twice the result budget."""
    return int((WORKER_BASE_ADDRESS_SPACE_MB + limits.memory_limit_mb + 2 * limits.max_result_mb) * 2**20)


def _status(folder: Path, **fields: object) -> None:
    (folder / "status.json").write_text(json.dumps(fields))


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
            fetched = fetch_bounded(con, request["sql"], limits)
        finally:
            con.close()
        with pa.OSFile(str(folder / "result.arrow"), "wb") as sink, \
                pa.ipc.new_file(sink, fetched.table.schema) as writer:
            writer.write_table(fetched.table)
        _status(folder, ok=True, truncated=fetched.truncated, n_bytes=fetched.n_bytes,
                as_text=list(fetched.as_text), seconds=time.perf_counter() - started)
    except LimitExceeded as exc:
        _status(folder, ok=False, kind="limit", limit=exc.limit, message=str(exc))
    except ReadRefused as exc:
        _status(folder, ok=False, kind=type(exc).__name__, message=str(exc))
    except WarehouseBusy as exc:
        _status(folder, ok=False, kind="busy", message=str(exc))
    except MemoryError as exc:
        refused = limit_error(exc, limits)
        _status(folder, ok=False, kind="limit", limit=refused.limit if refused else "memory_limit_mb",
                message=str(refused))
    except duckdb.Error as exc:  # a DuckDB error the user's SQL caused: one line back
        refused = limit_error(exc, limits)
        damaged = open_failure(Path(request.get("shown_db") or request["db"]), exc)
        if refused is not None:
            _status(folder, ok=False, kind="limit", limit=refused.limit, message=str(refused))
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
