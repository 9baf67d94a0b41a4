"""Load-time derived facts (evidence_funnel_facts, trajectory_funnel_facts, judgment_score_facts,
trajectory_signals): refreshed for the trajectories a write touches, recomputed whole when the stored definition
hash differs from this code's."""
from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass
from importlib import resources

import duckdb

from ._definitions import definitions_sql
from ._view_files import load_views, views_named

# Trajectories per statement of a full recompute: a bounded working set at any warehouse size.
_RECOMPUTE_SLICE = 50_000


@dataclass(frozen=True)
class Derived:
    """One derived table: its load SQL (warehouse/load/<table>.sql) recomputes the rows of the trajectories listed
    in the temp table `refresh` (one trajectory_id column)."""

    table: str
    refresh: str

    @property
    def load_file(self) -> str:
        return f"{self.table}.sql"


FUNNEL = Derived("evidence_funnel_facts", "funnel_refresh")
# After FUNNEL: each trajectory's funnel summed and its first-decisive-error walk, from the funnel facts.
WALK = Derived("trajectory_funnel_facts", "walk_refresh")
SCORES = Derived("judgment_score_facts", "score_refresh")
# After SCORES: the signals read the stored verdicts (judgment_scores).
SIGNALS = Derived("trajectory_signals", "signals_refresh")
DERIVED = (FUNNEL, WALK, SCORES, SIGNALS)
FUNNEL_FACTS = FUNNEL.table


@functools.cache
def _load_file(name: str) -> str:
    return (resources.files("trajscope.warehouse") / "load" / name).read_text()


# The key of each upserted table whose rows can change stored trajectories' facts: warehouse/load/
# funnel_refresh_<table>.sql selects those trajectories from the keys put in temp table upserted_keys.
UPSERT_KEYS = {"questions": ("dataset", "question_id"), "chunks": ("dataset", "chunk_id")}


def upsert_refresh_sql(table: str) -> str:
    """The trajectories whose derived facts an upsert of `table` rows changes (reads temp table upserted_keys)."""
    return _load_file(f"funnel_refresh_{table}.sql")


@functools.cache
def _view_sql() -> dict[str, str]:
    return {v.name: v.sql for v in load_views()}


def _views_read(sql: str) -> list[str]:
    """The views `sql` names, and those they name in turn, sorted."""
    views, todo = _view_sql(), [sql]
    seen: set[str] = set()
    while todo:
        for name in views_named(todo.pop(), views) - seen:
            seen.add(name)
            todo.append(views[name])
    return sorted(seen)


@functools.cache
def facts_hash(derived: Derived) -> str:
    """sha256 of the facts' load SQL, the views it reads and the measure macros it calls: rows computed under
    another are stale."""
    load = _load_file(derived.load_file)
    views = _view_sql()
    text = "\0".join([load, definitions_sql(), *(name + "\0" + views[name] for name in _views_read(load))])
    return hashlib.sha256(text.encode()).hexdigest()


def funnel_facts_hash() -> str:
    """facts_hash of evidence_funnel_facts."""
    return facts_hash(FUNNEL)


def derived_hash() -> str:
    """Every derived table's definition hash in one string (part of a lake catalog's snapshot key)."""
    return ":".join(facts_hash(d) for d in DERIVED)


def refresh_facts(con: duckdb.DuckDBPyConnection, derived: Derived, trajectories_sql: str) -> None:
    """Recompute the facts of the trajectories `trajectories_sql` selects (one trajectory_id column), in slices of
    at most about _RECOMPUTE_SLICE trajectories (a corpus upsert may touch every stored trajectory)."""
    whole, sliced = f"{derived.refresh}_set", f"{derived.refresh}_slices"
    con.execute(f"CREATE OR REPLACE TEMP TABLE {whole} AS {trajectories_sql}")
    try:
        n = con.execute(f"SELECT count(*) FROM {whole}").fetchall()[0][0]
        slices = max(1, -(-n // _RECOMPUTE_SLICE))
        if slices > 1:
            # Slices of consecutive ids, so each slice's rows are stored together: the row groups a recompute
            # writes stay prunable by trajectory and run (hash slices left every row group spanning every run,
            # and a two-run page scanned all 30 of the 1M funnel facts' row groups instead of 13).
            con.execute(f"CREATE OR REPLACE TEMP TABLE {sliced} AS SELECT trajectory_id, "
                        f"(row_number() OVER (ORDER BY trajectory_id) - 1) // {_RECOMPUTE_SLICE} AS slice FROM {whole}")
        for i in range(slices):
            source = f"{sliced} WHERE slice = {i}" if slices > 1 else whole
            con.execute(f"CREATE OR REPLACE TEMP TABLE {derived.refresh} AS SELECT trajectory_id FROM {source}")
            con.execute(_load_file(derived.load_file))
    except duckdb.Error as exc:
        raise RuntimeError(f"warehouse/load/{derived.load_file}: {exc}") from exc
    finally:
        try:
            for temp in (derived.refresh, sliced, whole):
                con.execute(f"DROP TABLE IF EXISTS {temp}")
        except duckdb.Error:
            pass  # an aborted transaction: its rollback removes them


def refresh_funnel_facts(con: duckdb.DuckDBPyConnection, trajectories_sql: str) -> None:
    """refresh_facts of evidence_funnel_facts, then of every derived table that reads them (the per-trajectory walk
    names titles and gold answers, so a batch and a question or chunk upsert keep it current alike)."""
    refresh_with_dependents(con, FUNNEL, trajectories_sql)


def refresh_funnel_facts_file(con: duckdb.DuckDBPyConnection, name: str) -> None:
    """refresh_funnel_facts for the trajectories warehouse/load/`name` selects (a batch, an upsert's keys)."""
    refresh_funnel_facts(con, _load_file(name))


def refresh_score_facts(con: duckdb.DuckDBPyConnection, trajectories_sql: str) -> None:
    """refresh_facts of judgment_score_facts: after any write of judgments or answer_checks of those trajectories."""
    refresh_facts(con, SCORES, trajectories_sql)


@functools.cache
def _derived_read(derived: Derived) -> frozenset[str]:
    """The other derived tables `derived`'s load SQL reads, itself or through the views it reads."""
    load = _load_file(derived.load_file)
    others = [d.table for d in DERIVED if d is not derived]
    return frozenset().union(*(views_named(text, others)
                               for text in [load, *(_view_sql()[name] for name in _views_read(load))]))


def refresh_with_dependents(con: duckdb.DuckDBPyConnection, derived: Derived, trajectories_sql: str) -> None:
    """refresh_facts of `derived`, then of every later derived table that reads one refreshed before it."""
    refreshed = {derived.table}
    for later in DERIVED[DERIVED.index(derived):]:
        if later is derived or _derived_read(later) & refreshed:
            refresh_facts(con, later, trajectories_sql)
            refreshed.add(later.table)


def refresh_verdict_facts(con: duckdb.DuckDBPyConnection, trajectories_sql: str) -> None:
    """After a write of those trajectories' judgments or answer checks: their stored scores and what reads them."""
    refresh_with_dependents(con, SCORES, trajectories_sql)


def refresh_score_facts_file(con: duckdb.DuckDBPyConnection, name: str) -> None:
    """refresh_score_facts for the trajectories warehouse/load/`name` selects (a loaded batch)."""
    refresh_score_facts(con, _load_file(name))


def refresh_signal_facts(con: duckdb.DuckDBPyConnection, trajectories_sql: str) -> None:
    """refresh_facts of trajectory_signals: after judgment_score_facts, for every trajectory a write touched."""
    refresh_facts(con, SIGNALS, trajectories_sql)


def refresh_signal_facts_file(con: duckdb.DuckDBPyConnection, name: str) -> None:
    """refresh_signal_facts for the trajectories warehouse/load/`name` selects (a batch, an upsert's keys)."""
    refresh_signal_facts(con, _load_file(name))


def facts_stale(con: duckdb.DuckDBPyConnection, derived: Derived) -> bool:
    """Whether the stored facts were computed by another definition (or never); False before the table exists."""
    exists = con.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE table_name IN ('derived_facts_state', $t) "
        "AND database_name = current_database() AND schema_name = 'main'", {"t": derived.table}).fetchall()[0][0]
    if exists < 2:
        return False
    row = con.execute("SELECT max(definition_hash) FROM derived_facts_state WHERE name = $n",
                      {"n": derived.table}).fetchall()[0][0]
    return row != facts_hash(derived)


def funnel_facts_stale(con: duckdb.DuckDBPyConnection) -> bool:
    """facts_stale of evidence_funnel_facts."""
    return facts_stale(con, FUNNEL)


def any_facts_stale(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether any derived table's stored facts were computed by another definition."""
    return any(facts_stale(con, d) for d in DERIVED)


def recompute_facts(con: duckdb.DuckDBPyConnection, derived: Derived) -> None:
    """Every trajectory's facts under this code's definition, then its hash recorded (in the caller's transaction)."""
    con.execute(f"DELETE FROM {derived.table}")
    refresh_facts(con, derived, "SELECT trajectory_id FROM trajectories")
    con.execute("DELETE FROM derived_facts_state WHERE name = $n", {"n": derived.table})
    con.execute("INSERT INTO derived_facts_state (name, definition_hash) VALUES ($n, $h)",
                {"n": derived.table, "h": facts_hash(derived)})


def recompute_stale_facts(con: duckdb.DuckDBPyConnection, *, every: bool = False) -> None:
    """recompute_facts of every derived table whose stored definition hash is not this code's (of all, when
    `every`: after a migration, whose changed columns the stored facts were computed without)."""
    for derived in DERIVED:
        if every or facts_stale(con, derived):
            recompute_facts(con, derived)


__all__ = ["DERIVED", "FUNNEL", "FUNNEL_FACTS", "SCORES", "SIGNALS", "WALK", "Derived", "any_facts_stale",
           "derived_hash",
           "facts_hash",
           "facts_stale", "funnel_facts_hash", "funnel_facts_stale",
           "recompute_facts", "recompute_stale_facts", "refresh_facts", "refresh_funnel_facts",
           "refresh_funnel_facts_file", "refresh_score_facts", "refresh_score_facts_file", "refresh_signal_facts",
           "UPSERT_KEYS", "upsert_refresh_sql",
           "refresh_signal_facts_file", "refresh_verdict_facts", "refresh_with_dependents"]
