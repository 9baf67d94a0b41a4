"""The statement allow-list: one read-only SELECT, decided by DuckDB's parser and its parsed tree."""
from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import duckdb

from .._file_lock import SANDBOX_CONFIG
from ._errors import ForbiddenStatement

MAX_SQL_CHARS = 100_000

# The only statement type that runs. EXPLAIN is refused too: its inner statement (EXPLAIN ANALYZE
# CREATE ...) cannot be serialised by DuckDB, so it cannot be checked.
_ALLOWED_TYPES = {duckdb.StatementType.SELECT}

# Query nodes a SELECT may contain; a DELETE/INSERT/UPDATE node hidden in a CTE is anything else.
_QUERY_NODES = {"SELECT_NODE", "SET_OPERATION_NODE", "RECURSIVE_CTE_NODE", "CTE_NODE"}

# Table functions that only compute over values or the warehouse's own catalog; every other table
# function (read_*, glob, query, json_execute_serialized_sql, parquet_*, duckdb_secrets...) is refused.
ALLOWED_TABLE_FUNCTIONS = frozenset({
    "range", "generate_series", "unnest", "json_each", "json_tree", "repeat_row",
    "duckdb_tables", "duckdb_views", "duckdb_columns", "duckdb_types", "duckdb_functions", "duckdb_keywords",
    "duckdb_constraints", "duckdb_indexes", "duckdb_schemas", "duckdb_dependencies", "pragma_table_info",
    "pragma_show", "pragma_storage_info",
})

# Functions (table or scalar) that touch the server's files, environment or network, or run other SQL;
# named here so the refusal says what the function does.
FILE_FUNCTIONS = frozenset({
    "read_csv", "read_csv_auto", "read_parquet", "parquet_scan", "parquet_metadata", "parquet_schema",
    "parquet_file_metadata", "parquet_kv_metadata", "parquet_full_metadata", "parquet_bloom_probe",
    "read_json", "read_json_auto", "read_json_objects", "read_json_objects_auto", "read_ndjson",
    "read_ndjson_auto", "read_ndjson_objects", "read_text", "read_blob", "read_duckdb", "read_single_csv_file",
    "glob", "sniff_csv", "read_xlsx", "iceberg_scan", "delta_scan", "sqlite_scan", "sqlite_attach",
    "postgres_scan", "mysql_scan", "read_avro", "getenv", "file_exists",
})
SQL_RUNNING_FUNCTIONS = frozenset({"query", "query_table", "json_execute_serialized_sql", "json_deserialize_sql"})

_FIRST_WORD = re.compile(r"[A-Za-z]+")
_parser_lock = threading.Lock()


@cache
def _parser() -> duckdb.DuckDBPyConnection:
    # An in-memory sandboxed connection whose only job is json_serialize_sql.
    return duckdb.connect(":memory:", config=dict(SANDBOX_CONFIG))


@cache
def _catalog_sql(name: str) -> str:
    # Beside this module (not importlib.resources): the query worker loads it without the package __init__.
    return (Path(__file__).with_name(f"{name}.sql")).read_text()


@dataclass(frozen=True)
class Catalog:
    """What a query on one connection may name: its tables and views, and its own table macros."""

    relations: frozenset[tuple[str, str, str]]  # (database, schema, name), lower-cased
    table_macros: frozenset[str]


def known_relations(con: duckdb.DuckDBPyConnection) -> Catalog:
    """The tables, views and table macros visible on con."""
    relations = frozenset(tuple(r) for r in con.execute(_catalog_sql("known_relations")).fetchall())
    macros = frozenset(r[0] for r in con.execute(_catalog_sql("table_macros")).fetchall())
    return Catalog(relations, macros)


def _verb(type_: duckdb.StatementType, text: str) -> str:
    # Wording only: the refusal itself was decided by the statement type.
    if type_ == duckdb.StatementType.COPY:
        return "COPY ... TO" if re.search(r"\bTO\b", text, re.I) else "COPY ... FROM"
    word = _FIRST_WORD.search(re.sub(r"--[^\n]*|/\*.*?\*/", " ", text, flags=re.S))
    word_text = word.group(0).upper() if word else type_.name
    return type_.name if word_text == "WITH" else word_text


def _nodes(tree: Any) -> Iterator[dict[str, Any]]:
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            yield node
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def _parsed_tree(sql: str, con: duckdb.DuckDBPyConnection | None) -> Any:
    if con is None:
        with _parser_lock:
            raw = _parser().execute("SELECT json_serialize_sql($1)", [sql]).fetchall()[0][0]
    else:
        raw = con.execute("SELECT json_serialize_sql($1)", [sql]).fetchall()[0][0]
    try:
        tree = json.loads(raw)
    except RecursionError:
        raise ForbiddenStatement("the query is nested too deeply to be checked") from None
    if tree.get("error"):
        raise ForbiddenStatement(
            f"this statement cannot be checked as a plain SELECT ({tree.get('error_message', 'not serialisable')}); "
            "only SELECT queries run"
        )
    return tree["statements"]


def _check_tree(tree: Any, catalog: Catalog | None) -> None:
    cte_names: set[str] = set()
    tables: list[dict[str, Any]] = []
    for node in _nodes(tree):
        kind = node.get("type")
        if "class" in node:
            if node["class"] == "FUNCTION":
                name = str(node.get("function_name", "")).lower()
                _refuse_function(name, table=False)
            continue
        if not isinstance(kind, str):
            continue
        if kind.endswith("_NODE") and kind not in _QUERY_NODES:
            what = kind.removesuffix("_QUERY_NODE").removesuffix("_NODE")
            raise ForbiddenStatement(
                f"{what} inside a query is not allowed: the sandbox runs read-only SELECT queries only"
            )
        if kind == "TABLE_FUNCTION":
            function = node.get("function") or {}
            name = str(function.get("function_name", "")).lower()
            _refuse_function(name, table=True)
            # Without a catalog (a first check before any connection) only the deny-lists apply; the
            # check on the connection, always made before running, applies the allow-list.
            if catalog is not None and name not in ALLOWED_TABLE_FUNCTIONS and name not in catalog.table_macros:
                raise ForbiddenStatement(
                    f"{name}() is not an allowed table function: only "
                    f"{', '.join(sorted(ALLOWED_TABLE_FUNCTIONS))} run in the sandbox"
                )
        elif kind == "BASE_TABLE":
            tables.append(node)
        cte_map = node.get("cte_map")
        if isinstance(cte_map, dict):
            cte_names.update(str(e.get("key", "")).lower() for e in cte_map.get("map") or [])
    if catalog is None:
        return
    relations = catalog.relations
    for table in tables:
        name = str(table.get("table_name", "")).lower()
        schema = str(table.get("schema_name", "")).lower()
        database = str(table.get("catalog_name", "")).lower()
        if not schema and not database and name in cte_names:
            continue
        if not any(r[2] == name and (not schema or r[1] == schema) and (not database or r[0] == database)
                   for r in relations):
            shown = ".".join(p for p in (database, schema, table.get("table_name", "")) if p)
            raise ForbiddenStatement(
                f"no table or view named {shown!r} in the warehouse (file paths and URLs cannot be queried)"
            )


def _refuse_function(name: str, *, table: bool) -> None:
    if name in FILE_FUNCTIONS:
        raise ForbiddenStatement(
            f"{name}() reads files, the environment or the network on the server: the sandbox can only "
            "query the warehouse's tables and views"
        )
    if name in SQL_RUNNING_FUNCTIONS:
        raise ForbiddenStatement(f"{name}() runs SQL of its own, which the sandbox cannot check: not allowed")


def check_statement(sql: str, *, con: duckdb.DuckDBPyConnection | None = None,
                    catalog: Catalog | None = None) -> str:
    """The single SELECT in sql, stripped; raises ForbiddenStatement naming what is not allowed.

    With a catalog (see known_relations), every table named must be one of its tables or views or a CTE,
    and every table function an allowed one or one of its table macros.
    """
    if not sql or not sql.strip():
        raise ForbiddenStatement("the query is empty: type a SELECT")
    if len(sql) > MAX_SQL_CHARS:
        raise ForbiddenStatement(f"the query is {len(sql):,} characters long; the limit is {MAX_SQL_CHARS:,}")
    if "\x00" in sql:
        raise ForbiddenStatement("the query contains a NUL character")
    try:
        statements = (con.extract_statements(sql) if con is not None else duckdb.extract_statements(sql))
        types = [statement.type for statement in statements]
    except duckdb.Error as exc:
        raise ForbiddenStatement(f"SQL syntax error: {str(exc).splitlines()[0]}") from None
    except (ValueError, RuntimeError):
        # DuckDB parsed a statement kind its Python API cannot name (e.g. UPDATE EXTENSIONS).
        raise ForbiddenStatement(
            "this kind of statement is not allowed: the sandbox runs read-only SELECT queries only"
        ) from None
    if len(statements) != 1:
        raise ForbiddenStatement(f"{len(statements)} statements given: one SELECT per query")
    if types[0] not in _ALLOWED_TYPES:
        raise ForbiddenStatement(
            f"{_verb(types[0], sql)} is not allowed: the sandbox is read-only and runs SELECT queries only "
            "(no writes, schema changes, COPY, ATTACH, INSTALL/LOAD, SET, PRAGMA, EXPLAIN or transactions)"
        )
    statement = statements[0].query.strip().rstrip(";").strip()
    try:
        _check_tree(_parsed_tree(statement, con), catalog)
    except RecursionError:
        raise ForbiddenStatement("the query is nested too deeply to be checked") from None
    return statement


__all__ = ["ALLOWED_TABLE_FUNCTIONS", "Catalog", "FILE_FUNCTIONS", "MAX_SQL_CHARS", "SQL_RUNNING_FUNCTIONS",
           "check_statement", "known_relations"]
