"""Descriptions of the columns many tables and views share, each written once and put on every such column."""
from __future__ import annotations

import duckdb

from trajscope.format import end_reason_description


def shared_descriptions() -> dict[str, str]:
    """column name -> its description, wherever a table or view of the warehouse has that column."""
    return {"end_reason": end_reason_description(), "child_end_reason": end_reason_description("the child")}


def describe_shared_columns(con: duckdb.DuckDBPyConnection) -> None:
    """Put each shared description on every column of the warehouse's own tables and views that bears its name."""
    descriptions = shared_descriptions()
    columns = con.execute(
        "SELECT table_name, column_name FROM duckdb_columns() WHERE NOT internal AND schema_name = 'main' "
        "AND database_name = current_database() AND list_contains(?, column_name)", [list(descriptions)]).fetchall()
    for table, column in columns:
        text = descriptions[column].replace("'", "''")
        con.execute(f"COMMENT ON COLUMN \"{table}\".\"{column}\" IS '{text}'")


__all__ = ["describe_shared_columns", "shared_descriptions"]
