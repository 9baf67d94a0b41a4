"""The measure definitions as SQL macros, rendered from trajscope.format's constants and installed before the views."""
from __future__ import annotations

import functools
from importlib import resources
from string import Template

import duckdb

from trajscope.format import (
    AGENT_ACTION_KINDS,
    CORRECT_AT,
    ENTITY_EXTRACTORS,
    FORCED_END_REASONS,
    GATE_EXTRACTOR,
    GAVE_UP_END_REASONS,
    LOW_EVIDENCE_THRESHOLD,
    MIN_GOLD_CHARS,
    SCORED_AT_IMPORT,
    SEARCH_KINDS,
)


def _sql_list(values: tuple[str, ...]) -> str:
    return "[" + ", ".join("'" + v.replace("'", "''") + "'" for v in values) + "]"


@functools.cache
def definitions_sql() -> str:
    """warehouse/definitions/measures.sql with each constant written in."""
    template = (resources.files("trajscope.warehouse") / "definitions" / "measures.sql").read_text()
    return Template(template).substitute(
        low_evidence_threshold=repr(float(LOW_EVIDENCE_THRESHOLD)),
        correct_at=repr(float(CORRECT_AT)),
        entity_extractors=_sql_list(ENTITY_EXTRACTORS),
        forced_end_reasons=_sql_list(FORCED_END_REASONS),
        gave_up_end_reasons=_sql_list(GAVE_UP_END_REASONS),
        gate_extractor=GATE_EXTRACTOR.replace("'", "''"),
        search_kinds=_sql_list(SEARCH_KINDS),
        agent_action_kinds=_sql_list(AGENT_ACTION_KINDS),
        min_gold_chars=str(int(MIN_GOLD_CHARS)),
        scored_at_import=SCORED_AT_IMPORT.replace("'", "''"),
    )


@functools.cache
def table_macros_sql() -> str:
    """warehouse/definitions/table_macros.sql: the table macros over base tables that fact fills and views read."""
    return (resources.files("trajscope.warehouse") / "definitions" / "table_macros.sql").read_text()


def install_definitions(con: duckdb.DuckDBPyConnection) -> None:
    """(Re)create the measure macros, then the table macros (over the migrated tables); views and fact fills call
    them, so this runs first."""
    for name, sql in (("measures.sql", definitions_sql()), ("table_macros.sql", table_macros_sql())):
        try:
            con.execute(sql)
        except duckdb.Error as exc:
            raise RuntimeError(f"warehouse/definitions/{name}: {exc}") from exc


__all__ = ["definitions_sql", "install_definitions", "table_macros_sql"]
