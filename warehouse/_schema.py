"""Schema versioning: numbered SQL migrations, then the named views, installed on every write open."""
from __future__ import annotations

import functools
import hashlib
import re
from importlib import resources

import duckdb

from ._column_descriptions import describe_shared_columns, shared_descriptions
from ._definitions import definitions_sql, install_definitions, table_macros_sql
from ._derived import any_facts_stale, derived_hash, recompute_stale_facts
from ._transaction import transaction
from ._view_files import ViewDef, load_views, views_named

_MIGRATION_RE = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")


@functools.cache
def _migrations() -> tuple[tuple[int, str, str], ...]:
    # Package files: read once per process, not on every open of the warehouse.
    folder = resources.files("trajscope.warehouse") / "migrations"
    found = []
    for entry in folder.iterdir():
        m = _MIGRATION_RE.match(entry.name)
        if m:
            found.append((int(m.group(1)), entry.name, entry.read_text()))
    return tuple(sorted(found))


def schema_version(con: duckdb.DuckDBPyConnection) -> int:
    """Highest applied migration number (0 for an empty file)."""
    exists = con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_name = 'schema_migrations'"
    ).fetchall()[0][0]
    if not exists:
        return 0
    return con.execute("SELECT coalesce(max(version), 0) FROM schema_migrations").fetchall()[0][0]


def latest_schema_version() -> int:
    """The version this code writes."""
    return max(v for v, _, _ in _migrations())


def _dependency_order(views: list[ViewDef]) -> list[ViewDef]:
    # A failed CREATE aborts the enclosing transaction, so order views by the names they mention.
    by_name = {v.name: v for v in views}
    deps = {v.name: views_named(v.sql, by_name) - {v.name} for v in views}
    ordered: list[ViewDef] = []
    done: set[str] = set()
    while len(ordered) < len(views):
        ready = [n for n in sorted(deps) if n not in done and deps[n] <= done]
        if not ready:
            cycle = sorted(n for n in deps if n not in done)
            raise ValueError(f"warehouse/views: circular references among {cycle}")
        for name in ready:
            ordered.append(by_name[name])
            done.add(name)
    return ordered


def install_views(con: duckdb.DuckDBPyConnection) -> None:
    """(Re)create the measure macros, then every view, dependencies first; then the shared column descriptions."""
    install_definitions(con)
    for view in _dependency_order(load_views()):
        try:
            con.execute(view.sql)
            # The file's one-line description is stored too, so any SQL client can show it.
            con.execute(f"COMMENT ON VIEW {view.name} IS '{view.description.replace(chr(39), chr(39) * 2)}'")
        except duckdb.Error as exc:
            raise RuntimeError(f"warehouse/views/{view.name}.sql: {exc}") from exc
    describe_shared_columns(con)


def migrate(con: duckdb.DuckDBPyConnection) -> int:
    """Apply pending migrations, reinstall changed views and recompute stale derived facts, in one transaction;
    returns the new version."""
    current = schema_version(con)
    pending = [(v, name, sql) for v, name, sql in _migrations() if v > current]
    needs_views = bool(pending) or _views_hash_stale(con)
    if not pending and not needs_views and not any_facts_stale(con):
        return current
    with transaction(con):
        con.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER, name VARCHAR, "
            "applied_at TIMESTAMPTZ DEFAULT current_timestamp)"
        )
        for version, name, sql in pending:
            con.execute(sql)
            con.execute("INSERT INTO schema_migrations (version, name) VALUES (?, ?)", [version, name])
        if needs_views:
            install_views(con)
            _record_views_hash(con)
        # After the views: the facts' SQL calls the measure macros install_views has just (re)created. A migration
        # may have changed the columns they read (0004 added trajectories.cached_calls): all are recomputed then.
        recompute_stale_facts(con, every=bool(pending))
    return schema_version(con)


@functools.cache
def _views_hash() -> str:
    digest = hashlib.sha256(definitions_sql().encode() + b"\0" + table_macros_sql().encode() + b"\0")
    digest.update(repr(sorted(shared_descriptions().items())).encode() + b"\0")
    for view in load_views():
        digest.update(view.name.encode() + b"\0" + view.sql.encode() + b"\0")
    return digest.hexdigest()


def schema_stamp() -> str:
    """This code's schema version, views hash and derived facts' hash in one string: what a file built by it records
    (a lake catalog)."""
    return f"{latest_schema_version()}:{_views_hash()}:{derived_hash()}"


def views_stale(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether the installed views, or the derived facts they read, differ from this code's definitions."""
    return _views_hash_stale(con) or any_facts_stale(con)


def _views_hash_stale(con: duckdb.DuckDBPyConnection) -> bool:
    exists = con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_name = 'views_state'"
    ).fetchall()[0][0]
    if not exists:
        return True
    row = con.execute("SELECT views_hash FROM views_state").fetchall()[0]
    return row is None or row[0] != _views_hash()


def _record_views_hash(con: duckdb.DuckDBPyConnection) -> None:
    con.execute("CREATE TABLE IF NOT EXISTS views_state (views_hash VARCHAR)")
    con.execute("DELETE FROM views_state")
    con.execute("INSERT INTO views_state VALUES (?)", [_views_hash()])
