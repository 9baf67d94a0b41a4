"""Run a checked console query on a sandboxed connection with a time limit and a row cap."""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path

import duckdb
import polars as pl

from app.access import chartable, read_connection

from ._guard import check_statement


class QueryTimeout(RuntimeError):
    """The query ran past the console's time limit and was interrupted."""


@dataclass(frozen=True)
class ConsoleResult:
    """Rows (at most the cap), whether more existed, and the SQL that ran."""

    sql: str
    df: pl.DataFrame
    truncated: bool
    seconds: float


def run_console_query(
    db_path: str | Path, sql: str, *, timeout_s: float, row_cap: int, lock_wait_s: float = 15.0
) -> ConsoleResult:
    """Check, then run sql; raises ForbiddenStatement, QueryTimeout or duckdb.Error (sandbox refusals)."""
    statement = check_statement(sql)
    start = time.perf_counter()
    with read_connection(db_path, lock_wait_s=lock_wait_s) as con:
        interrupted = threading.Event()

        def stop() -> None:
            interrupted.set()
            con.interrupt()

        # DuckDB has no statement timeout, so a timer interrupts the running query.
        timer = threading.Timer(timeout_s, stop)
        timer.daemon = True
        timer.start()
        try:
            relation = con.sql(statement)
            if relation is None:
                raise duckdb.InvalidInputException("the statement returned no result set")
            df = relation.limit(row_cap + 1).pl() if statement_is_select(relation) else relation.pl()
        except duckdb.InterruptException:
            raise QueryTimeout(
                f"the query ran past the console's time limit of {timeout_s:g} s and was stopped; "
                "narrow it (WHERE, LIMIT) or aggregate first"
            ) from None
        except duckdb.Error:
            if interrupted.is_set():
                raise QueryTimeout(
                    f"the query ran past the console's time limit of {timeout_s:g} s and was stopped"
                ) from None
            raise
        finally:
            timer.cancel()
    truncated = df.height > row_cap
    return ConsoleResult(
        sql=statement, df=chartable(df.head(row_cap)), truncated=truncated,
        seconds=time.perf_counter() - start,
    )


def statement_is_select(relation: duckdb.DuckDBPyRelation) -> bool:
    """True for a lazy SELECT relation (EXPLAIN output is materialised and needs no cap)."""
    return relation.type.upper() != "EXPLAIN"
