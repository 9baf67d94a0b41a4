"""Schema browser: the warehouse's views and tables with the descriptions stored as COMMENT ON."""
from __future__ import annotations

from trajscope.app.access import sql_literal


def schema_relations_sql() -> str:
    """Every named view and table with its stored one-line description (NULL where none is stored)."""
    return """SELECT view_name AS name, 'view' AS kind, comment AS description
FROM duckdb_views() WHERE NOT internal
UNION ALL
SELECT table_name AS name, 'table' AS kind, comment AS description
FROM duckdb_tables() WHERE NOT internal
ORDER BY kind DESC, name"""


def schema_columns_sql(relations: list[str] | None = None) -> str:
    """The columns of the named views and tables (all when None), in order, with type and stored description."""
    where = (f"\n  AND table_name IN ({', '.join(sql_literal(r) for r in relations) or 'NULL'})"
             if relations is not None else "")
    return f"""SELECT table_name AS relation, column_name AS column, data_type AS type, comment AS description
FROM duckdb_columns()
WHERE NOT internal{where}
ORDER BY table_name, column_index"""
