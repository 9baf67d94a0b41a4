"""The warehouse's named views and their columns, as `trajscope views` lists them and `Warehouse.views` returns them."""
from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from trajscope.warehouse import Reader

T = TypeVar("T")

_LISTED_SQL = ("SELECT view_name, coalesce(comment, '') FROM duckdb_views() WHERE NOT internal "
               "ORDER BY view_name")
_COMMENT_SQL = ("SELECT comment FROM duckdb_views() WHERE view_name = $n AND NOT internal "
                "UNION ALL SELECT comment FROM duckdb_tables() WHERE table_name = $n")
_COLUMNS_SQL = ("SELECT column_name, data_type, comment FROM duckdb_columns() WHERE table_name = $n "
                "ORDER BY column_index")


class UnknownView(LookupError):
    """A name that is neither a view nor a table of the warehouse."""


@dataclass(frozen=True)
class ViewDescription:
    """A view's or table's stored comment and its (column, type, comment) rows."""

    name: str
    description: str | None
    columns: tuple[tuple[str, str, str | None], ...]


@contextmanager
def _catalog(db_path: str | Path | None) -> Iterator[Reader]:
    # Without a warehouse the catalog comes from an empty one built in memory by this code's migrations,
    # so a view's columns can be read before any data exists.
    from trajscope.warehouse import open_read
    from trajscope.warehouse.read import open_blank

    if db_path is None:
        with open_blank() as reader:
            yield reader
    else:  # the read path: brought up to date, sandboxed, refused with one line when not a warehouse
        with open_read(db_path) as reader:
            yield reader


def with_catalog(db_path: str | Path | None, action: Callable[[Reader], T]) -> T:
    """action's answer over the warehouse's catalog (this version's own views when db_path is None)."""
    with _catalog(db_path) as reader:
        return action(reader)


def listed_views(db_path: str | Path | None) -> list[tuple[str, str]]:
    """(name, one-line description) of every view: those stored in db_path, or this version's."""
    from trajscope.warehouse import load_views

    if db_path is None:
        return [(v.name, v.description) for v in load_views()]
    return with_catalog(db_path, lambda reader: [(str(n), str(d)) for n, d in reader.execute(_LISTED_SQL).fetchall()])


def describe(reader: Reader, name: str) -> ViewDescription:
    """A view's or table's description and columns from DuckDB's catalog (COMMENT ON)."""
    found = reader.execute(_COMMENT_SQL, {"n": name}).fetchall()
    if not found:
        raise UnknownView(f"no view or table {name!r} in the warehouse; `trajscope views` lists the views")
    columns = reader.execute(_COLUMNS_SQL, {"n": name}).fetchall()
    return ViewDescription(name, found[0][0], tuple((str(c), str(t), m) for c, t, m in columns))


def describe_view(db_path: str | Path | None, name: str) -> ViewDescription:
    """describe over db_path's catalog (this version's own when db_path is None)."""
    return with_catalog(db_path, lambda reader: describe(reader, name))


__all__ = ["UnknownView", "ViewDescription", "describe", "describe_view", "listed_views", "with_catalog"]
