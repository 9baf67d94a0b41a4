"""Runs the derived fact units (warehouse/facts, see _fact_units): refreshed for the trajectories a write touches,
recomputed whole when the stored definition hash differs from this code's."""
from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import overload

import duckdb

from ._definitions import definitions_sql, table_macros_sql
from ._fact_units import FactUnit, fact_units
from ._sql_reads import statements

# Trajectories per statement of a full recompute: a bounded working set at any warehouse size.
_RECOMPUTE_SLICE = 50_000


class _Units(Sequence[FactUnit]):
    """fact_units() in dependency order, read on first use: importing the warehouse parses no SQL."""

    @overload
    def __getitem__(self, index: int) -> FactUnit: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[FactUnit]: ...

    def __getitem__(self, index: int | slice) -> FactUnit | Sequence[FactUnit]:
        return fact_units()[index]

    def __len__(self) -> int:
        return len(fact_units())

    def __iter__(self) -> Iterator[FactUnit]:
        return iter(fact_units())


DERIVED: Sequence[FactUnit] = _Units()

# The key of each upserted table whose rows can change stored trajectories' facts: a unit's refresh_<table>.sql
# selects those trajectories from the keys put in temp table upserted_keys.
UPSERT_KEYS = {"questions": ("dataset", "question_id"), "chunks": ("dataset", "chunk_id")}


def fact_unit(table: str) -> FactUnit:
    """The unit of derived table `table`."""
    return next(u for u in DERIVED if u.table == table)


def upsert_refresh_sql(table: str) -> str:
    """The trajectories whose derived facts an upsert of `table` rows changes (reads temp table upserted_keys): every
    unit's rule for it."""
    return "\nUNION\n".join(dict.fromkeys(rule for u in DERIVED if (rule := u.rule(table))))


@functools.cache
def _table_macros() -> frozenset[str]:
    found = statements(table_macros_sql(), "warehouse/definitions/table_macros.sql")
    return frozenset(s.writes for s in found if s.writes)


@functools.cache
def facts_hash(unit: FactUnit) -> str:
    """sha256 of the unit's fill, the measure macros and (if it reads one) the table macros: rows computed under
    another are stale."""
    read_macros = [table_macros_sql()] if unit.reads & _table_macros() else []
    return hashlib.sha256("\0".join([unit.fill, definitions_sql(), *read_macros]).encode()).hexdigest()


def funnel_facts_hash() -> str:
    """facts_hash of evidence_funnel_facts."""
    return facts_hash(fact_unit("evidence_funnel_facts"))


def derived_hash() -> str:
    """Every derived table's definition hash in one string (part of a lake catalog's snapshot key)."""
    return ":".join(facts_hash(d) for d in DERIVED)


@dataclass
class FreshTrajectories:
    """Trajectories new to the warehouse (`sql` selects them), whose facts a loaded batch computes: they hold no fact
    rows to delete, and while later facts are computed from theirs, a temp view of each fact table's name holds the
    batch's rows alone (`shadowed`)."""

    sql: str
    shadowed: list[str] = field(default_factory=list)

    def unshadow(self, con: duckdb.DuckDBPyConnection) -> None:
        """The stored fact tables visible again (they hold the batch's rows as well)."""
        try:
            for table in self.shadowed:
                con.execute(f"DROP VIEW IF EXISTS temp.main.{table}")
                con.execute(f"DROP TABLE IF EXISTS {_batch_rows(table)}")
        except duckdb.Error:
            pass  # an aborted transaction: its rollback removes them
        self.shadowed.clear()


def _batch_rows(table: str) -> str:
    return f"batch_rows_{table}"


def refresh_facts(con: duckdb.DuckDBPyConnection, derived: FactUnit, trajectories_sql: str,
                  fresh: FreshTrajectories | None = None) -> None:
    """Recompute the facts of the trajectories `trajectories_sql` selects (one trajectory_id column), in slices of
    at most about _RECOMPUTE_SLICE trajectories (a corpus upsert may touch every stored trajectory)."""
    whole, sliced = f"{derived.refresh}_set", f"{derived.refresh}_slices"
    con.execute(f"CREATE OR REPLACE TEMP TABLE {whole} AS {trajectories_sql}")
    try:
        n = con.execute(f"SELECT count(*) FROM {whole}").fetchall()[0][0]
        # A filter by string id scans every row of a stored table (no row group is skipped), even when it finds
        # nothing: a batch of new trajectories would read every fact stored before it, to delete and to join.
        all_fresh = fresh is not None and not con.execute(
            f"SELECT count(*) FROM {whole} WHERE trajectory_id NOT IN (SELECT trajectory_id FROM ({fresh.sql}))"
        ).fetchall()[0][0]
        if fresh is not None and not all_fresh:
            fresh.unshadow(con)  # stored trajectories among these: their facts are read from the stored tables
        shadow = all_fresh and any(derived.table in _facts_read(unit) for unit in DERIVED)
        target = _batch_rows(derived.table) if shadow else derived.table
        if shadow:
            con.execute(f"CREATE OR REPLACE TEMP TABLE {target} AS SELECT * FROM {derived.table} LIMIT 0")
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
            con.execute(derived.insert_into(target) if all_fresh else derived.fill)
        if shadow and fresh is not None:
            con.execute(f"INSERT INTO {derived.table} BY NAME SELECT * FROM {target}")
            con.execute(f"CREATE OR REPLACE TEMP VIEW {derived.table} AS SELECT * FROM {target}")
            fresh.shadowed.append(derived.table)
    except duckdb.Error as exc:
        raise RuntimeError(f"{derived.fill_path}: {exc}") from exc
    finally:
        try:
            for temp in (derived.refresh, sliced, whole):
                con.execute(f"DROP TABLE IF EXISTS {temp}")
        except duckdb.Error:
            pass  # an aborted transaction: its rollback removes them


def _facts_read(unit: FactUnit) -> frozenset[str]:
    """The other derived tables the unit's fill reads."""
    return unit.reads & {d.table for d in DERIVED if d is not unit}


def refresh_on(con: duckdb.DuckDBPyConnection, event: str, fresh_sql: str | None = None) -> None:
    """After `event` (a loaded batch, or an upserted table of UPSERT_KEYS): in order, every unit with a rule for it,
    and every unit reading facts refreshed before it, for its own rule's trajectories and those facts' trajectories.
    `fresh_sql` selects the trajectories new to the warehouse (FreshTrajectories)."""
    chosen: dict[str, str] = {}
    fresh = FreshTrajectories(fresh_sql) if fresh_sql is not None else None
    try:
        for unit in DERIVED:
            own = unit.rule(event)
            parts = ([own] if own else []) + [chosen[t] for t in sorted(_facts_read(unit)) if t in chosen]
            if parts:
                chosen[unit.table] = "\nUNION\n".join(dict.fromkeys(parts))
                refresh_facts(con, unit, chosen[unit.table], fresh)
    finally:
        if fresh is not None:
            fresh.unshadow(con)


def _refresh_readers(con: duckdb.DuckDBPyConnection, changed: Iterable[str], trajectories_sql: str) -> None:
    refreshed = set(changed)
    for unit in DERIVED:
        if unit.reads & refreshed:
            refresh_facts(con, unit, trajectories_sql)
            refreshed.add(unit.table)


def refresh_with_dependents(con: duckdb.DuckDBPyConnection, derived: FactUnit, trajectories_sql: str) -> None:
    """refresh_facts of `derived`, then of every later derived table that reads one refreshed before it."""
    refresh_facts(con, derived, trajectories_sql)
    _refresh_readers(con, [derived.table], trajectories_sql)


def refresh_verdict_facts(con: duckdb.DuckDBPyConnection, trajectories_sql: str) -> None:
    """After a write of those trajectories' judgments or answer checks: every unit reading them, and their readers."""
    _refresh_readers(con, ["judgments", "answer_checks"], trajectories_sql)


def facts_stale(con: duckdb.DuckDBPyConnection, derived: FactUnit) -> bool:
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
    return facts_stale(con, fact_unit("evidence_funnel_facts"))


def any_facts_stale(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether any derived table's stored facts were computed by another definition."""
    return any(facts_stale(con, d) for d in DERIVED)


def recompute_facts(con: duckdb.DuckDBPyConnection, derived: FactUnit) -> None:
    """Every trajectory's facts under this code's definition, then its hash recorded (in the caller's transaction)."""
    con.execute(f"DELETE FROM {derived.table}")
    refresh_facts(con, derived, "SELECT trajectory_id FROM trajectories")
    con.execute("DELETE FROM derived_facts_state WHERE name = $n", {"n": derived.table})
    con.execute("INSERT INTO derived_facts_state (name, definition_hash) VALUES ($n, $h)",
                {"n": derived.table, "h": facts_hash(derived)})


def recompute_stale_facts(con: duckdb.DuckDBPyConnection, *, every: bool = False) -> None:
    """recompute_facts of every derived table whose stored definition hash is not this code's, and of every one
    reading facts recomputed before it (of all, when `every`: after a migration, whose changed columns the stored
    facts were computed without)."""
    recomputed: set[str] = set()
    for derived in DERIVED:
        if every or facts_stale(con, derived) or _facts_read(derived) & recomputed:
            recompute_facts(con, derived)
            recomputed.add(derived.table)


__all__ = ["DERIVED", "UPSERT_KEYS", "any_facts_stale", "derived_hash", "fact_unit", "facts_hash", "facts_stale",
           "funnel_facts_hash", "funnel_facts_stale", "recompute_facts", "recompute_stale_facts", "refresh_facts",
           "refresh_on", "refresh_verdict_facts", "refresh_with_dependents", "upsert_refresh_sql"]
