"""A report table as a typed object: caption, typed columns, rows, footnote and the SQL it came from."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Interval:
    """An estimate with its confidence interval, in the column's display units."""

    value: float | None
    low: float | None
    high: float | None


@dataclass(frozen=True)
class WithDelta:
    """A value printed with its change against a reference, as "82.8 (+3.2)"."""

    value: float | None
    delta: float | None


# Column kinds and how a cell of each kind prints (CSV keeps full precision in the same units).
KINDS = ("text", "int", "num", "signed", "p", "interval", "plain_interval", "with_delta", "usd")


@dataclass(frozen=True)
class Column:
    """One column: CSV key, printed label, kind (see KINDS) and decimals shown."""

    key: str
    label: str
    kind: str = "num"
    digits: int = 1

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"column {self.key}: unknown kind {self.kind!r}")


@dataclass(frozen=True)
class ReportTable:
    """One table of a paper's report; `not_applicable` says why it has no numbers, when it has none."""

    name: str
    title: str
    caption: str
    columns: tuple[Column, ...]
    rows: tuple[tuple[object, ...], ...] = ()
    footnote: str = ""
    sql: str = ""
    not_applicable: str | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        for row in self.rows:
            if len(row) != len(self.columns):
                raise ValueError(f"table {self.name}: a row has {len(row)} cells for {len(self.columns)} columns")

    def with_footnote(self, footnote: str) -> ReportTable:
        """The same table with the provenance footnote set."""
        return ReportTable(
            self.name,
            self.title,
            self.caption,
            self.columns,
            self.rows,
            footnote,
            self.sql,
            self.not_applicable,
            self.notes,
        )


@dataclass(frozen=True)
class ReportFigure:
    """A figure of a report: a Vega-Lite spec (rendered to PNG / SVG by vl-convert) and the SQL behind it."""

    name: str
    title: str
    caption: str
    spec: dict
    sql: str


def does_not_apply(
    name: str, title: str, caption: str, columns: tuple[Column, ...], reason: str, sql: str = ""
) -> ReportTable:
    """A table whose input the runs lack: no rows, and the reason instead."""
    return ReportTable(name, title, caption, columns, (), "", sql, reason)


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _signed(value: float, digits: int) -> str:
    text = f"{value:+.{digits}f}"
    return "+0." + "0" * digits if text.startswith("-") and float(text) == 0 else text


def _number(value: float | None, digits: int, signed: bool) -> str:
    """One number of a compound cell, signed or plain; "--" when missing."""
    if value is None or _missing(value):
        return "--"
    return _signed(value, digits) if signed else f"{value:.{digits}f}"


def _p_value(value: float) -> str:
    if value < 1e-4:
        return "<1e-4"
    return f"{value:.4f}" if value < 0.001 else f"{value:.3f}"


def format_cell(value: object, column: Column) -> str:
    """The printed text of one cell ("--" for a missing value; intervals as the papers print them)."""
    d = column.digits
    if isinstance(value, Interval):
        if _missing(value.value):
            return "--"
        signed = column.kind == "interval"
        low, high, mid = (_number(x, d, signed) for x in (value.low, value.high, value.value))
        return f"{mid} [{low}, {high}]"
    if isinstance(value, WithDelta):
        if _missing(value.value):
            return "--"
        return _number(value.value, d, False) + ("" if _missing(value.delta) else f" ({_number(value.delta, d, True)})")
    if _missing(value):
        return "--"
    if column.kind == "text" or isinstance(value, str):
        return str(value)
    # Past the missing and text cases a cell holds a number, of whichever numeric type the query returned.
    number: Any = value
    if column.kind == "int" or isinstance(number, bool):
        return f"{int(number):,}" if not isinstance(number, bool) else ("yes" if number else "no")
    if column.kind == "p":
        return _p_value(float(number))
    if column.kind == "signed":
        return _signed(float(number), d)
    if column.kind == "usd":
        return f"{float(number):.{max(d, 4)}f}"
    return f"{float(number):.{d}f}"


def csv_cells(value: object, column: Column) -> dict[str, object]:
    """The CSV fields of one cell: full precision; an interval spreads over key, key_low, key_high."""
    if column.kind in ("interval", "plain_interval"):
        iv = value if isinstance(value, Interval) else Interval(None, None, None)
        return {column.key: iv.value, f"{column.key}_low": iv.low, f"{column.key}_high": iv.high}
    if column.kind == "with_delta":
        wd = value if isinstance(value, WithDelta) else WithDelta(None, None)
        return {column.key: wd.value, f"{column.key}_delta": wd.delta}
    return {column.key: value}


__all__ = ["KINDS", "Column", "Interval", "ReportTable", "WithDelta", "csv_cells", "does_not_apply", "format_cell"]
