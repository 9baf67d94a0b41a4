"""Short read-only queries: open, run, close at once, so an ingest elsewhere is never blocked for long."""
from __future__ import annotations

import time
from collections.abc import Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from trajscope.warehouse import NotAWarehouse, ReadLimits, open_read
from trajscope.warehouse.read import to_polars
from trajscope.warehouse.read import write_lock as warehouse_write_lock

from ._config import load_config


def write_lock():
    """Hold while this process writes the warehouse (uploads), so no read connection is open meanwhile."""
    return warehouse_write_lock()


def _limits(lock_wait_s: float | None, limits: ReadLimits | None) -> ReadLimits:
    return limits or load_config().page_limits().with_overrides(lock_wait_s=lock_wait_s)


@contextmanager
def read_connection(db_path: str | Path, *, lock_wait_s: float | None = None, limits: ReadLimits | None = None):
    """A warehouse Reader (warehouse.open_read) for one page's work, each query bounded, closed on exit."""
    with open_read(db_path, limits=_limits(lock_wait_s, limits)) as reader:
        yield reader


@dataclass(frozen=True)
class QueryResult:
    """A query's rows with the exact SQL text that produced them."""

    sql: str
    df: pl.DataFrame
    seconds: float
    truncated: bool = False  # more rows than the page row cap existed; the page says so


def chartable(df: pl.DataFrame) -> pl.DataFrame:
    """DECIMAL and HUGEINT columns as DOUBLE / BIGINT, which charts and tables understand."""
    casts = []
    for name, dtype in df.schema.items():
        if isinstance(dtype, pl.Decimal):
            casts.append(pl.col(name).cast(pl.Float64))
        elif dtype == pl.Int128:
            casts.append(pl.col(name).cast(pl.Int64))
    return df.with_columns(casts) if casts else df


def run_query(db_path: str | Path, sql: str, *, lock_wait_s: float | None = None,
              limits: ReadLimits | None = None) -> QueryResult:
    """Run one SELECT through the read path (checked, time-limited, row- and byte-capped) as polars."""
    return run_queries(db_path, {"q": sql}, lock_wait_s=lock_wait_s, limits=limits)["q"]


def run_queries(
    db_path: str | Path, named_sql: dict[str, str], *, lock_wait_s: float | None = None,
    limits: ReadLimits | None = None
) -> dict[str, QueryResult]:
    """Several queries of one page render on one short-lived connection (closed before returning).

    Each is checked and bounded like any other read (warehouse.Reader.fetch); raises ReadRefused.
    """
    results = {}
    with open_read(db_path, limits=_limits(lock_wait_s, limits)) as reader:
        for name, sql in named_sql.items():
            start = time.perf_counter()
            fetched = reader.fetch(sql)
            results[name] = QueryResult(sql=sql, df=chartable(to_polars(fetched.table)),
                                        seconds=time.perf_counter() - start, truncated=fetched.truncated)
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


# Every table and named view by name: a lake's catalog holds its warehouse tables as views over the lake's files.
RELATIONS_SQL = ("SELECT table_name AS name FROM duckdb_tables() UNION ALL "
                 "SELECT view_name FROM duckdb_views() WHERE NOT internal")

_STATE_SQL = """SELECT (SELECT count(*) FROM runs) AS n_runs,
       (SELECT count(*) FROM trajectories) AS n_trajectories,
       (SELECT list(view_name) FROM duckdb_views() WHERE NOT internal) AS views"""


def warehouse_state(db_path: str | Path, *, lock_wait_s: float | None = None) -> WarehouseState:
    """Counts and view names; a missing file or one without the schema reads as empty."""
    if not Path(db_path).exists():
        return WarehouseState(exists=False)
    try:
        with read_connection(db_path, lock_wait_s=lock_wait_s) as con:
            tables = {r[0] for r in con.execute(RELATIONS_SQL).fetchall()}
            if not {"runs", "trajectories"} <= tables:
                return WarehouseState(exists=False)
            n_runs, n_traj, views = con.execute(_STATE_SQL).fetchall()[0]
    except NotAWarehouse:  # a DuckDB file without the schema (or an empty one): nothing to show yet
        return WarehouseState(exists=False)
    return WarehouseState(True, n_runs, n_traj, frozenset(views or ()))


def available_views(db_path: str | Path) -> frozenset[str]:
    """Names of the named views in this warehouse file."""
    return warehouse_state(db_path).views
