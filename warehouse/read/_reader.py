"""Reader: the warehouse opened to read, whose every query is checked and bounded; it never hands out
its connection, so no caller can run a query without the statement check, the time, row and byte limits."""
from __future__ import annotations

import datetime
import uuid
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pyarrow as pa
from duckdb.sqltypes import DuckDBPyType

from ._errors import LimitExceeded
from ._fetch import Fetched, fetch_bounded, fetch_rows
from ._limits import ReadLimits
from ._statement import Catalog, check_statement, known_relations

Params = list[Any] | tuple[Any, ...] | dict[str, Any] | None


def _interval(value: Any) -> Any:
    # DuckDB's own conversion: a month is 30 days.
    if value is None:
        return None
    return datetime.timedelta(days=value.months * 30 + value.days, microseconds=value.nanoseconds // 1000)


def _converter(type_: DuckDBPyType):  # noqa: ANN202 - a per-value function or None
    """How an Arrow value of this DuckDB type becomes what DuckDB's own fetchall gives (None: as it is)."""
    kind = type_.id
    if kind in ("hugeint", "uhugeint"):  # Arrow carries them as decimal128(38, 0)
        return lambda v: None if v is None else int(v)
    if kind == "map":  # Arrow gives a list of (key, value) pairs
        return lambda v: None if v is None else dict(v)
    if kind == "uuid":  # Arrow gives the text
        return lambda v: None if v is None else uuid.UUID(v)
    if kind == "interval":
        return _interval
    return None


class Rows:
    """A query's complete result (never cut: a result past the row cap is refused), read like a DB-API cursor."""

    def __init__(self, table: pa.Table, types: list[DuckDBPyType]):
        self._table = table
        self._types = types
        self._rows: list[tuple[Any, ...]] | None = None
        self._next = 0
        self.description = [(name, type_, None, None, None, None, None)
                            for name, type_ in zip(table.column_names, types, strict=True)]

    def _all(self) -> list[tuple[Any, ...]]:
        if self._rows is None:
            columns = []
            for column, type_ in zip(self._table.columns, self._types, strict=True):
                values = column.to_pylist()
                convert = _converter(type_)
                columns.append([convert(v) for v in values] if convert else values)
            self._rows = list(zip(*columns, strict=True)) if columns else []
        return self._rows

    def fetchall(self) -> list[tuple[Any, ...]]:
        """The rows not fetched yet."""
        rows = self._all()[self._next:]
        self._next = len(self._all())
        return rows

    def fetchone(self) -> tuple[Any, ...] | None:
        """The next row, or None after the last."""
        rows = self._all()
        if self._next >= len(rows):
            return None
        self._next += 1
        return rows[self._next - 1]

    def to_arrow_table(self) -> pa.Table:
        """The result as Arrow, in the types DuckDB exports."""
        return self._table

    def pl(self) -> pl.DataFrame:
        """The result as a polars frame."""
        return pl.from_arrow(self._table)  # type: ignore[return-value]


class Reader:
    """One read session on a sandboxed read-only connection; made by open_read, closed when it exits.

    execute: the code's own queries, whole results (a result past max_rows is refused, never cut).
    fetch: a page's or a preview's rows, cut at max_rows and saying so. Both check the statement (one
    SELECT over the warehouse's tables and views) and stop it at limits.timeout_s.
    """

    def __init__(self, con: duckdb.DuckDBPyConnection, limits: ReadLimits, path: Path):
        self._con = con
        self._catalog: Catalog | None = None
        self._checked: dict[str, str] = {}  # SQL text -> its checked statement (a command repeats its queries)
        self.limits = limits
        self.path = path

    def _statement(self, sql: str) -> str:
        checked = self._checked.get(sql)
        if checked is None:
            if self._catalog is None:
                self._catalog = known_relations(self._con)
            checked = self._checked[sql] = check_statement(sql, con=self._con, catalog=self._catalog)
        return checked

    def execute(self, sql: str, params: Params = None) -> Rows:
        """Run one checked SELECT within the limits; its whole result, or LimitExceeded."""
        statement = self._statement(sql)
        table, types, truncated = fetch_rows(self._con, statement, params, self.limits)
        if truncated:
            raise LimitExceeded(
                f"stopped: the query returned more than the limit of {self.limits.max_rows:,} rows; narrow it or "
                "raise the row limit", limit="max_rows")
        return Rows(table, types)

    def fetch(self, sql: str, params: Params = None) -> Fetched:
        """Run one checked SELECT within the limits; at most max_rows rows (truncated says more existed),
        with the types polars cannot hold shown as text."""
        return fetch_bounded(self._con, self._statement(sql), self.limits, params=params, checked=True)

    def frame(self, sql: str, params: Params = None) -> pl.DataFrame:
        """execute's whole result as a polars frame."""
        return self.execute(sql, params).pl()


__all__ = ["Reader", "Rows"]
