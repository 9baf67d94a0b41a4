"""The SQL console and the Export filter: SQL a user typed, run through the warehouse's one read path."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import polars as pl

from trajscope.app.access import chartable
from trajscope.warehouse import CONSOLE_LIMITS, ReadLimits, run_read_query


@dataclass(frozen=True)
class ConsoleResult:
    """Rows (at most the cap), whether more existed, the SQL that ran and the columns shown as text."""

    sql: str
    df: pl.DataFrame
    truncated: bool
    seconds: float
    as_text: tuple[str, ...] = ()


def run_console_query(db_path: str | Path, sql: str, *, timeout_s: float, row_cap: int,
                      lock_wait_s: float | None = None, limits: ReadLimits | None = None) -> ConsoleResult:
    """Check, then run sql in a memory-bounded query worker; raises ReadRefused subclasses (one-line reasons)."""
    limits = (limits or CONSOLE_LIMITS).with_overrides(timeout_s=timeout_s, max_rows=row_cap, lock_wait_s=lock_wait_s)
    result = run_read_query(db_path, sql, limits=limits)
    return ConsoleResult(sql=result.sql, df=chartable(result.df), truncated=result.truncated,
                         seconds=result.seconds, as_text=result.as_text)


def export_query_sql(source: str, where: str | None, limit: int) -> str:
    """The Export page's query: every column of one view or table, the user's filter, a row limit."""
    quoted = '"' + source.replace('"', '""') + '"'
    condition = f"\nWHERE {where.strip()}\n" if where and where.strip() else "\n"
    return f"SELECT *\nFROM {quoted}{condition}LIMIT {int(limit)}"


def run_export_query(db_path: str | Path, source: str, where: str | None, limit: int, *,
                     limits: ReadLimits) -> ConsoleResult:
    """The Export page's preview and download rows, bounded like the console (the filter is user SQL)."""
    sql = export_query_sql(source, where, limit)
    result = run_read_query(db_path, sql, limits=limits.with_overrides(max_rows=int(limit)))
    return ConsoleResult(sql=result.sql, df=chartable(result.df), truncated=result.truncated,
                         seconds=result.seconds, as_text=result.as_text)
