"""open_read: the one way every command and page opens the warehouse to read it."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

from ._limits import DEFAULT_LIMITS, ReadLimits
from ._open import PROCESS_LOCK, connect_sandboxed, resolve_path
from ._tempdir import shared_temp_dir
from ._upgrade import upgrade_or_refuse


@contextmanager
def open_read(path: str | Path | None = None, *, limits: ReadLimits = DEFAULT_LIMITS,
              upgrade: bool = True) -> Iterator[duckdb.DuckDBPyConnection]:
    """Bring the warehouse up to date, then yield a sandboxed read-only connection, closed on exit.

    No file or network access, no extensions, settings locked; memory, temp disk and threads bounded
    by limits. For the time limit wrap the work in `time_limit(con, limits.timeout_s)`.
    """
    path = resolve_path(path)
    if upgrade:
        upgrade_or_refuse(path, timeout_s=limits.lock_wait_s, limits=limits)
    with PROCESS_LOCK.read(), shared_temp_dir() as temp_directory:
        con = connect_sandboxed(path, limits, temp_directory)
        try:
            yield con
        finally:
            con.close()


__all__ = ["open_read"]
