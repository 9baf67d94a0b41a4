"""WHERE clauses from filter values, written as literals so the shown SQL is exactly what ran."""
from __future__ import annotations

from collections.abc import Mapping, Sequence

from trajscope.app.access import sql_literal


def where_in(filters: Mapping[str, Sequence[str]], *, prefix: str = "") -> str:
    """`WHERE col IN (...) AND ...` for the non-empty filters, or an empty string."""
    clauses = [
        f"{prefix}{column} IN ({', '.join(sql_literal(v) for v in values)})"
        for column, values in filters.items() if values
    ]
    return ("WHERE " + "\n  AND ".join(clauses)) if clauses else ""
