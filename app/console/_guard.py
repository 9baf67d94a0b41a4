"""Refuse anything but one read-only query, using DuckDB's own parser to classify the statement."""
from __future__ import annotations

import re

import duckdb

# Statement types the console runs; everything else is refused before a connection opens.
_ALLOWED = {duckdb.StatementType.SELECT, duckdb.StatementType.EXPLAIN}

# Table and scalar functions that read the server's files or the network. The sandboxed connection
# refuses them too; checking first gives a clear message instead of a permission error.
FILE_FUNCTIONS = frozenset({
    "read_csv", "read_csv_auto", "read_parquet", "parquet_scan", "parquet_metadata", "parquet_schema",
    "parquet_file_metadata", "parquet_kv_metadata", "read_json", "read_json_auto", "read_json_objects",
    "read_json_objects_auto", "read_ndjson", "read_ndjson_auto", "read_ndjson_objects", "read_text",
    "read_blob", "glob", "sniff_csv", "read_xlsx", "iceberg_scan", "delta_scan", "sqlite_scan",
    "sqlite_attach", "postgres_scan", "mysql_scan", "read_avro", "getenv",
})

_COMMENTS_AND_STRINGS = re.compile(r"--[^\n]*|/\*.*?\*/|'(?:[^']|'')*'", re.S)
_CALL = re.compile(r'"?([A-Za-z_][A-Za-z0-9_]*)"?\s*\(')
_FIRST_WORD = re.compile(r"[A-Za-z]+")


class ForbiddenStatement(ValueError):
    """A console statement that is not a single read-only query; the message says why."""


def _verb(type_: duckdb.StatementType, text: str) -> str:
    first = _FIRST_WORD.search(_COMMENTS_AND_STRINGS.sub(" ", text))
    word = first.group(0).upper() if first else type_.name
    if type_ == duckdb.StatementType.COPY:
        return "COPY ... TO" if re.search(r"\bTO\b", text, re.I) else "COPY ... FROM"
    if type_ == duckdb.StatementType.LOAD:
        return word  # INSTALL or LOAD
    return type_.name if word == "WITH" else word


def check_statement(sql: str) -> str:
    """The single statement in sql, stripped; raises ForbiddenStatement for anything not read-only."""
    if not sql.strip():
        raise ForbiddenStatement("the query is empty: type a SELECT")
    try:
        statements = duckdb.extract_statements(sql)
        types = [statement.type for statement in statements]
    except duckdb.Error as exc:
        raise ForbiddenStatement(f"SQL syntax error: {str(exc).splitlines()[0]}") from None
    except ValueError:
        # DuckDB parsed a statement kind its Python API cannot name (e.g. UPDATE EXTENSIONS).
        raise ForbiddenStatement(
            "this kind of statement is not allowed: the console runs read-only SELECT queries only"
        ) from None
    if len(statements) != 1:
        raise ForbiddenStatement(
            f"{len(statements)} statements given: the console runs one SELECT at a time"
        )
    if types[0] not in _ALLOWED:
        verb = _verb(types[0], sql)
        raise ForbiddenStatement(
            f"{verb} is not allowed: the console is read-only and runs SELECT queries only "
            "(no writes, schema changes, COPY ... TO, ATTACH, INSTALL/LOAD, SET or PRAGMA)"
        )
    code = _COMMENTS_AND_STRINGS.sub(" ", sql)
    for name in _CALL.findall(code):
        if name.lower() in FILE_FUNCTIONS:
            raise ForbiddenStatement(
                f"{name}() reads files or the network on the server: the console can only query "
                "the warehouse's tables and views"
            )
    return sql.strip().rstrip(";").strip()
