"""Bringing an existing warehouse up to date: a read-only look, and a short write open only when needed."""
from __future__ import annotations

import threading
from pathlib import Path

import duckdb

from .._connection import WarehouseBusy, open_warehouse
from .._file_check import open_failure
from .._schema import latest_schema_version, schema_version, views_stale
from ._errors import NotAWarehouse
from ._limits import DEFAULT_LIMITS, ReadLimits
from ._open import PROCESS_LOCK, connect_sandboxed, not_our_schema
from ._tempdir import shared_temp_dir

# Files already found current in this process, by (path, size, mtime): the look is skipped until they change.
_current: set[tuple[str, int, int]] = set()
_current_lock = threading.Lock()


def _stamp(path: Path) -> tuple[str, int, int]:
    info = path.stat()
    return (str(path.resolve()), info.st_size, info.st_mtime_ns)


def upgrade_if_warehouse(path: str | Path, *, timeout_s: float = 5.0, limits: ReadLimits | None = None) -> str:
    """Apply pending migrations and view changes to an existing trajscope warehouse file.

    Returns "upgraded", "current" (nothing to do), "not a warehouse" (left untouched) or "busy"
    (locked past timeout_s). Every command that reads goes through this, via open_read; the look uses
    limits' connection settings, since DuckDB refuses two in-process connections with different ones.
    """
    try:
        return upgrade_or_refuse(path, timeout_s=timeout_s, limits=limits)
    except NotAWarehouse:
        return "not a warehouse"
    except WarehouseBusy:
        return "busy"


def upgrade_or_refuse(path: str | Path, *, timeout_s: float = 5.0, limits: ReadLimits | None = None) -> str:
    """upgrade_if_warehouse, raising NotAWarehouse (saying why: corrupt, no schema, ...) instead of returning it."""
    limits = (limits or DEFAULT_LIMITS).with_overrides(lock_wait_s=timeout_s)
    path = Path(path)
    if not path.is_file():
        raise NotAWarehouse(f"{path}: is not a regular file, not a warehouse")
    stamp = _stamp(path)
    with _current_lock:
        if stamp in _current:
            return "current"
    # A look that waits out the lock raises WarehouseBusy: the caller's own open would only wait the same
    # lock again (a read then took twice the stated wait, about 30 s for 15).
    with PROCESS_LOCK.read(), shared_temp_dir() as temp_directory:
        con = connect_sandboxed(path, limits, temp_directory)
        try:
            tables = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
            if "schema_migrations" not in tables:
                raise not_our_schema(path)
            version, latest = schema_version(con), latest_schema_version()
            if version > latest:  # its tables and views may mean other things than this code's queries assume
                raise NotAWarehouse(f"{path}: was written by a newer trajscope (schema {version}; this one reads "
                                    f"up to {latest}); upgrade trajscope to read it")
            current = version >= latest and not views_stale(con)
        except duckdb.Error as exc:
            refused = open_failure(path, exc)
            if refused is None:
                raise
            raise NotAWarehouse(str(refused)) from None
        finally:
            con.close()
    if not current:
        try:
            with PROCESS_LOCK.write(), open_warehouse(path, timeout_s=timeout_s):
                pass
        except WarehouseBusy:
            return "busy"  # readers share the file: the read goes on, on the schema as it is
    with _current_lock:
        _current.add(_stamp(path))
    return "current" if current else "upgraded"


__all__ = ["upgrade_if_warehouse", "upgrade_or_refuse"]
