"""Load-time derived facts (evidence_funnel_facts): refreshed for the trajectories a write touches, recomputed whole
when the stored definition hash differs from this code's."""
from __future__ import annotations

import functools
import hashlib
from importlib import resources

import duckdb

from ._definitions import definitions_sql

FUNNEL_FACTS = "evidence_funnel_facts"
# Trajectories per statement of a full recompute: a bounded working set at any warehouse size.
_RECOMPUTE_SLICE = 50_000


@functools.cache
def _load_file(name: str) -> str:
    return (resources.files("warehouse") / "load" / name).read_text()


@functools.cache
def funnel_facts_hash() -> str:
    """sha256 of the facts' load SQL and the measure macros it calls: rows computed under another are stale."""
    text = _load_file("evidence_funnel_facts.sql") + "\0" + definitions_sql()
    return hashlib.sha256(text.encode()).hexdigest()


def refresh_funnel_facts(con: duckdb.DuckDBPyConnection, trajectories_sql: str) -> None:
    """Recompute the facts of the trajectories `trajectories_sql` selects (one trajectory_id column), in slices of
    at most about _RECOMPUTE_SLICE trajectories (a corpus upsert may touch every stored trajectory)."""
    con.execute(f"CREATE OR REPLACE TEMP TABLE funnel_refresh_set AS {trajectories_sql}")
    try:
        n = con.execute("SELECT count(*) FROM funnel_refresh_set").fetchall()[0][0]
        slices = max(1, -(-n // _RECOMPUTE_SLICE))
        for i in range(slices):
            where = f" WHERE hash(trajectory_id) % {slices} = {i}" if slices > 1 else ""
            con.execute("CREATE OR REPLACE TEMP TABLE funnel_refresh AS "
                        f"SELECT trajectory_id FROM funnel_refresh_set{where}")
            con.execute(_load_file("evidence_funnel_facts.sql"))
    except duckdb.Error as exc:
        raise RuntimeError(f"warehouse/load/evidence_funnel_facts.sql: {exc}") from exc
    finally:
        try:
            con.execute("DROP TABLE IF EXISTS funnel_refresh")
            con.execute("DROP TABLE IF EXISTS funnel_refresh_set")
        except duckdb.Error:
            pass  # an aborted transaction: its rollback removes both


def refresh_funnel_facts_file(con: duckdb.DuckDBPyConnection, name: str) -> None:
    """refresh_funnel_facts for the trajectories warehouse/load/`name` selects (a batch, an upsert's keys)."""
    refresh_funnel_facts(con, _load_file(name))


def funnel_facts_view_sql() -> str:
    """evidence_funnel_facts as a view computing every trajectory's facts per query, by the same SQL (a lake's
    catalog, whose tables are views over Parquet files)."""
    query = _load_file("evidence_funnel_facts.sql").split(f"INSERT INTO {FUNNEL_FACTS} BY NAME\n", 1)[1]
    return (f"DROP TABLE IF EXISTS {FUNNEL_FACTS};\n"
            "CREATE OR REPLACE VIEW funnel_refresh AS SELECT trajectory_id FROM trajectories;\n"
            f"CREATE VIEW {FUNNEL_FACTS} AS {query}")


def funnel_facts_stale(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether the stored facts were computed by another definition (or never); False before migration 0016."""
    exists = con.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE table_name = 'derived_facts_state' "
        "AND database_name = current_database() AND schema_name = 'main'").fetchall()[0][0]
    if not exists:
        return False
    row = con.execute("SELECT max(definition_hash) FROM derived_facts_state WHERE name = $n",
                      {"n": FUNNEL_FACTS}).fetchall()[0][0]
    return row != funnel_facts_hash()


def recompute_funnel_facts(con: duckdb.DuckDBPyConnection) -> None:
    """Every trajectory's facts under this code's definition, then its hash recorded (in the caller's transaction)."""
    con.execute(f"DELETE FROM {FUNNEL_FACTS}")
    refresh_funnel_facts(con, "SELECT trajectory_id FROM trajectories")
    con.execute("DELETE FROM derived_facts_state WHERE name = $n", {"n": FUNNEL_FACTS})
    con.execute("INSERT INTO derived_facts_state (name, definition_hash) VALUES ($n, $h)",
                {"n": FUNNEL_FACTS, "h": funnel_facts_hash()})


__all__ = ["FUNNEL_FACTS", "funnel_facts_hash", "funnel_facts_stale", "funnel_facts_view_sql", "recompute_funnel_facts",
           "refresh_funnel_facts", "refresh_funnel_facts_file"]
