"""open_read: the one way every command and page opens the warehouse to read it."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

from .._file_lock import NO_EXTENSIONS_CONFIG, SANDBOX_CONFIG
from .._schema import migrate
from ._limits import DEFAULT_LIMITS, ReadLimits
from ._open import PROCESS_LOCK, connect_sandboxed, resolve_path
from ._reader import Reader
from ._tempdir import shared_temp_dir
from ._upgrade import upgrade_or_refuse


@contextmanager
def open_read(path: str | Path | None = None, *, limits: ReadLimits = DEFAULT_LIMITS,
              upgrade: bool = True) -> Iterator[Reader]:
    """Bring the warehouse up to date, then yield a Reader on a sandboxed read-only connection, closed on exit.

    No file or network access, no extensions, settings locked; memory, temp disk and threads bounded by
    limits, and each query checked and stopped at the time, row and byte limits (see Reader).
    """
    path = resolve_path(path)
    if upgrade:
        upgrade_or_refuse(path, timeout_s=limits.lock_wait_s, limits=limits)
    with PROCESS_LOCK.read(), shared_temp_dir() as temp_directory:
        con = connect_sandboxed(path, limits, temp_directory)
        try:
            yield Reader(con, limits, path)
        finally:
            con.close()


@contextmanager
def open_blank(*, limits: ReadLimits = DEFAULT_LIMITS) -> Iterator[Reader]:
    """A Reader on an empty warehouse this code's migrations build in memory (its views, tables and comments)."""
    con = duckdb.connect(":memory:", config={**NO_EXTENSIONS_CONFIG, "threads": int(limits.threads)})
    try:
        migrate(con)
        # Sandboxed like a file's reads once built: no file access, settings locked.
        for name in ("enable_external_access", "lock_configuration"):
            con.execute(f"SET {name} = {str(SANDBOX_CONFIG[name]).lower()}")
        yield Reader(con, limits, Path(":memory:"))
    finally:
        con.close()


__all__ = ["open_blank", "open_read"]
