"""Short read-only queries: open, run, close at once, so an ingest elsewhere is never blocked for long."""
from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from warehouse import open_readonly


class _ReadersWriterLock:
    """Many readers or one writer; DuckDB refuses a read-write open while a read-only one is live in-process."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._readers = 0
        self._writing = False

    @contextmanager
    def read(self) -> Iterator[None]:
        with self._cond:
            self._cond.wait_for(lambda: not self._writing)
            self._readers += 1
        try:
            yield
        finally:
            with self._cond:
                self._readers -= 1
                self._cond.notify_all()

    @contextmanager
    def write(self) -> Iterator[None]:
        with self._cond:
            self._cond.wait_for(lambda: not self._writing and self._readers == 0)
            self._writing = True
        try:
            yield
        finally:
            with self._cond:
                self._writing = False
                self._cond.notify_all()


_LOCK = _ReadersWriterLock()


def write_lock():
    """Hold while this process writes the warehouse (uploads), so no read connection is open meanwhile."""
    return _LOCK.write()


@contextmanager
def read_connection(db_path: str | Path, *, lock_wait_s: float = 15.0):
    """A sandboxed read-only connection for one query, closed on exit."""
    with _LOCK.read(), open_readonly(db_path, timeout_s=lock_wait_s) as con:
        yield con


@dataclass(frozen=True)
class QueryResult:
    """A query's rows with the exact SQL text that produced them."""

    sql: str
    df: pl.DataFrame
    seconds: float


def chartable(df: pl.DataFrame) -> pl.DataFrame:
    """DECIMAL and HUGEINT columns as DOUBLE / BIGINT, which charts and tables understand."""
    casts = []
    for name, dtype in df.schema.items():
        if isinstance(dtype, pl.Decimal):
            casts.append(pl.col(name).cast(pl.Float64))
        elif dtype == pl.Int128:
            casts.append(pl.col(name).cast(pl.Int64))
    return df.with_columns(casts) if casts else df


def run_query(db_path: str | Path, sql: str, *, lock_wait_s: float = 15.0) -> QueryResult:
    """Run one SELECT on a fresh sandboxed read-only connection and return its rows as polars."""
    start = time.perf_counter()
    with read_connection(db_path, lock_wait_s=lock_wait_s) as con:
        df = con.sql(sql).pl()
    return QueryResult(sql=sql, df=chartable(df), seconds=time.perf_counter() - start)


def run_queries(
    db_path: str | Path, named_sql: dict[str, str], *, lock_wait_s: float = 15.0
) -> dict[str, QueryResult]:
    """Several queries of one page render on one short-lived connection (closed before returning)."""
    results = {}
    with read_connection(db_path, lock_wait_s=lock_wait_s) as con:
        for name, sql in named_sql.items():
            start = time.perf_counter()
            df = con.sql(sql).pl()
            results[name] = QueryResult(sql=sql, df=chartable(df), seconds=time.perf_counter() - start)
    return results


def sql_literal(value: object) -> str:
    """A SQL literal for value, so a page's query text is exactly what ran and can be pasted elsewhere."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, Sequence):
        return "[" + ", ".join(sql_literal(v) for v in value) + "]"
    raise TypeError(f"no SQL literal for {type(value).__name__}")


@dataclass(frozen=True)
class WarehouseState:
    """Whether the warehouse exists, how full it is and which named views it has."""

    exists: bool
    n_runs: int = 0
    n_trajectories: int = 0
    views: frozenset[str] = field(default_factory=frozenset)

    @property
    def empty(self) -> bool:
        return not self.exists or self.n_trajectories == 0


_STATE_SQL = """SELECT (SELECT count(*) FROM runs) AS n_runs,
       (SELECT count(*) FROM trajectories) AS n_trajectories,
       (SELECT list(view_name) FROM duckdb_views() WHERE NOT internal) AS views"""


def warehouse_state(db_path: str | Path, *, lock_wait_s: float = 15.0) -> WarehouseState:
    """Counts and view names; a missing file or one without the schema reads as empty."""
    if not Path(db_path).exists():
        return WarehouseState(exists=False)
    with read_connection(db_path, lock_wait_s=lock_wait_s) as con:
        tables = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
        if not {"runs", "trajectories"} <= tables:
            return WarehouseState(exists=False)
        n_runs, n_traj, views = con.execute(_STATE_SQL).fetchone()
    return WarehouseState(True, n_runs, n_traj, frozenset(views or ()))


def available_views(db_path: str | Path) -> frozenset[str]:
    """Names of the named views in this warehouse file."""
    return warehouse_state(db_path).views
