"""A query's columns in types every reader understands: text for types polars and JSON cannot hold."""
from __future__ import annotations

import duckdb

# Type ids whose Arrow form polars cannot import (INTERVAL panics, UNION fails), or loses (TIMETZ drops
# its offset, BIT becomes bytes, BIGNUM an opaque extension); a column holding one anywhere is text.
_AS_TEXT = {"interval", "union", "bignum", "varint", "bit", "time with time zone"}


def _needs_text(type_) -> bool:  # noqa: ANN001 - a DuckDBPyType
    if type_.id in _AS_TEXT:
        return True
    try:
        children = type_.children
    except (duckdb.Error, ValueError, TypeError):
        return False
    return any(_needs_text(child) for _, child in children if hasattr(child, "id"))


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def displayable(relation: duckdb.DuckDBPyRelation) -> tuple[duckdb.DuckDBPyRelation, list[str]]:
    """The relation with such columns cast to VARCHAR and duplicate names suffixed; and the cast columns."""
    names, types = relation.columns, relation.types
    seen: dict[str, int] = {}
    exprs, as_text, changed = [], [], False
    for position, (name, type_) in enumerate(zip(names, types, strict=True), start=1):
        key = name.lower()
        seen[key] = seen.get(key, 0) + 1
        alias = name if seen[key] == 1 else f"{name}_{seen[key]}"
        expr = f"#{position}"
        if _needs_text(type_):
            expr = f"CAST(#{position} AS VARCHAR)"
            as_text.append(alias)
        changed |= alias != name or expr != f"#{position}"
        exprs.append(f"{expr} AS {_quoted(alias)}")
    if not changed:
        return relation, []
    return relation.project(", ".join(exprs)), as_text


__all__ = ["displayable"]
