"""The relations a SQL file reads and writes, found by DuckDB's own parser (json_serialize_sql), with their lines."""
from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass

import duckdb

# Each statement kind as the SELECT the parser can serialize, and the relation it writes (None: writes none).
_LEADING_COMMENTS = re.compile(r"(?:\s+|--[^\n]*)*")
_FORMS = (
    (re.compile(r"DELETE\s+FROM\s+(\w+)\s+(?=WHERE\b)", re.I), "SELECT * FROM {0} "),
    (re.compile(r"INSERT\s+(?:OR\s+\w+\s+)?INTO\s+(\w+)\s*(?:BY\s+(?:NAME|POSITION)\s+|\([^)]*\)\s*)?", re.I), ""),
    (re.compile(r"CREATE\s+(?:OR\s+REPLACE\s+)?(?:TEMP\s+|TEMPORARY\s+)?(?:VIEW|TABLE)\s+(\w+)\s+AS\s+", re.I), ""),
    (re.compile(r"CREATE\s+(?:OR\s+REPLACE\s+)?(?:TEMP\s+|TEMPORARY\s+)?MACRO\s+(\w+)\s*\([^)]*\)\s+AS\s+TABLE\s+",
                re.I), ""),
    (re.compile(r"CREATE\s+(?:OR\s+REPLACE\s+)?(?:TEMP\s+|TEMPORARY\s+)?MACRO\s+(\w+)\s*\([^)]*\)\s+AS\s+", re.I),
     "SELECT "),
    (re.compile(r"(?=SELECT\b|WITH\b|FROM\b|VALUES\b|\()", re.I), ""),
)
# Statements that read no relation.
_SKIPPED = re.compile(r"(?:COMMENT\s+ON|DROP|SET|PRAGMA)\b", re.I)


@dataclass(frozen=True)
class Relation:
    """A relation a statement reads: a table or view (`function` False) or a table function, at `line` of its file."""

    name: str
    line: int
    function: bool = False


@dataclass(frozen=True)
class Statement:
    """One statement of a SQL file: its kind (DELETE, INSERT, SELECT, ...), the relation it writes (None for a query)
    and those it reads."""

    kind: str
    writes: str | None
    reads: tuple[Relation, ...]
    line: int


# One parser connection per thread: a DuckDB connection refuses a second call while one runs, and the dashboard's
# page threads may read the fact units at once.
_PARSERS = threading.local()


def _parser() -> duckdb.DuckDBPyConnection:
    con = getattr(_PARSERS, "con", None)
    if con is None:
        con = _PARSERS.con = duckdb.connect()
    return con


def _nodes(tree: object) -> Iterator[dict]:
    if isinstance(tree, dict):
        yield tree
        for value in tree.values():
            yield from _nodes(value)
    elif isinstance(tree, list):
        for value in tree:
            yield from _nodes(value)


def _code_start(text: str) -> int:
    """The offset of the first character after `text`'s leading whitespace and `--` comments."""
    match = _LEADING_COMMENTS.match(text)
    return match.end() if match else 0


def _as_query(statement: str) -> tuple[str | None, str, int] | None:
    """(written relation, the SELECT to serialize, offset of that SELECT in `statement`), None for one that reads
    nothing; ValueError for a form not known here."""
    start = _code_start(statement)
    if _SKIPPED.match(statement, start):
        return None
    for pattern, replacement in _FORMS:
        found = pattern.match(statement, start)
        if found:
            target = found.group(1) if found.groups() else None
            prefix = replacement.format(target)
            return target, prefix + statement[found.end():], found.end() - len(prefix)
    raise ValueError(f"a statement the layering check cannot read: {statement[start:start + 60]!r}")


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def statements(sql: str, name: str) -> list[Statement]:
    """Every statement of `sql` (the file `name`, for errors) with the relations it writes and reads; the names of
    its common table expressions are not relations."""
    con, found, position = _parser(), [], 0
    try:
        parts = [(s.query, s.type.name) for s in con.extract_statements(sql)]
    except duckdb.Error as exc:
        raise ValueError(f"{name}: {exc}") from exc
    for part, kind in parts:
        at = sql.find(part, position)
        at = position if at < 0 else at
        position = at + len(part)
        try:
            form = _as_query(part)
        except ValueError as exc:
            raise ValueError(f"{name}:{_line(sql, at)}: {exc}") from exc
        if form is None:
            continue
        writes, query, shift = form
        tree = json.loads(con.execute("SELECT json_serialize_sql($q)", {"q": query}).fetchall()[0][0])
        if tree.get("error"):
            raise ValueError(f"{name}:{_line(sql, at)}: {tree.get('error_message')}")
        nodes = list(_nodes(tree["statements"]))
        ctes = {entry["key"] for node in nodes if isinstance(node.get("cte_map"), dict)
                for entry in node["cte_map"]["map"]}
        reads = []
        for node in nodes:
            ref, where = node.get("type"), node.get("query_location")
            line = _line(sql, at + max(0, (where if where is not None and where < len(query) else 0) + shift))
            if ref == "BASE_TABLE" and node["table_name"] not in ctes and node["table_name"] != writes:
                reads.append(Relation(node["table_name"], line))
            elif ref == "TABLE_FUNCTION":
                reads.append(Relation(node["function"]["function_name"], line, function=True))
        found.append(Statement(kind, writes, tuple(reads), _line(sql, at + _code_start(part))))
    return found


def relations_read(sql: str, name: str) -> set[str]:
    """The names of every table, view and table function `sql` reads."""
    return {r.name for s in statements(sql, name) for r in s.reads}


__all__ = ["Relation", "Statement", "relations_read", "statements"]
