"""The SQL layering, read by DuckDB's parser: a fact unit's fill reads base tables, measure macros, its refresh temp
table and facts earlier in the order, never a view; its refresh rules read base tables and the load's temp tables;
views read facts, tables, macros and other views, never a temp table of the load."""
from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from trajscope.warehouse import open_readonly, open_warehouse
from trajscope.warehouse._definitions import definitions_sql, table_macros_sql
from trajscope.warehouse._derived import UPSERT_KEYS
from trajscope.warehouse._fact_units import FactUnit, fact_units
from trajscope.warehouse._sql_reads import Statement, statements
from trajscope.warehouse._view_files import load_views

ROOT = Path(__file__).resolve().parents[1]
MEASURES = "warehouse/definitions/measures.sql"
TABLE_MACROS = "warehouse/definitions/table_macros.sql"


def _load_temp_tables() -> set[str]:
    """The temp tables the load creates (in its SQL files and its Python): what a refresh rule may read."""
    created = re.compile(r"CREATE\s+(?:OR\s+REPLACE\s+)?TEMP(?:ORARY)?\s+TABLE\s+(\w+)", re.I)
    return {m.group(1) for p in [*(ROOT / "warehouse").rglob("*.sql"), *(ROOT / "warehouse").rglob("*.py")]
            for m in created.finditer(p.read_text())}


@pytest.fixture(scope="module")
def catalog(tmp_path_factory) -> dict[str, set[str]]:
    """The warehouse's base tables, fact tables, views, measure table macros and built-in table functions."""
    db = tmp_path_factory.mktemp("layers") / "w.duckdb"
    with open_warehouse(db):
        pass
    with open_readonly(db, sandboxed=False) as con:
        def names(sql: str) -> set[str]:
            return {r[0] for r in con.execute(sql).fetchall()}

        tables = names("SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main' AND NOT temporary")
        facts = {u.table for u in fact_units()}
        return {"base": tables - facts, "facts": facts, "views": {v.name for v in load_views()},
                "macros": names("SELECT function_name FROM duckdb_functions() WHERE function_type = 'table_macro' "
                                "AND NOT internal"),
                "builtin": names("SELECT function_name FROM duckdb_functions() WHERE function_type = 'table' "
                                 "AND internal"),
                "temp": _load_temp_tables()}


def _errors(path: str, found: list[Statement], allowed: set[str], kinds: dict[str, set[str]]) -> list[str]:
    """One line per relation read outside `allowed`, naming file, line and what the relation is."""
    def what(name: str) -> str:
        return next((k for k, members in kinds.items() if name in members), "unknown relation")

    return [f"{path}:{r.line}: reads {r.name} ({what(r.name)})"
            for s in found for r in s.reads if r.name not in allowed]


def layer_errors(units: list[FactUnit], views: dict[str, str], macros: dict[str, str],
                 catalog: dict[str, set[str]]) -> list[str]:
    """Every read across the layers: facts (in `units` order), their refresh rules, macro files and views."""
    errors, earlier = [], set()
    functions = catalog["macros"] | catalog["builtin"]
    for unit in units:
        errors += _errors(unit.fill_path, statements(unit.fill, unit.fill_path),
                          catalog["base"] | functions | earlier | {unit.refresh}, catalog)
        for event, rule in unit.rules:
            path = f"warehouse/facts/{unit.table}/refresh_{event}.sql"
            errors += _errors(path, statements(rule, path), catalog["base"] | catalog["temp"], catalog)
        earlier.add(unit.table)
    for path, sql in macros.items():
        errors += _errors(path, statements(sql, path), catalog["base"] | functions, catalog)
    for name, sql in views.items():
        path = f"warehouse/views/{name}.sql"
        errors += _errors(path, statements(sql, path),
                          catalog["base"] | catalog["facts"] | catalog["views"] | functions, catalog)
    return errors


def _current() -> tuple[list[FactUnit], dict[str, str], dict[str, str]]:
    return (list(fact_units()), {v.name: v.sql for v in load_views()},
            {MEASURES: definitions_sql(), TABLE_MACROS: table_macros_sql()})


def test_every_relation_read_sits_in_a_layer_below_the_reader(catalog):
    units, views, macros = _current()
    assert layer_errors(units, views, macros, catalog) == []
    # What the check parsed is what the files read: the walk reads the funnel facts, a view the signals.
    assert "evidence_funnel_facts" in next(u for u in units if u.table == "trajectory_funnel_facts").reads
    assert {r.name for s in statements(views["trajectory_facts"], "v") for r in s.reads} == {"trajectory_signals"}


def test_a_fill_reading_a_view_fails_with_its_file_line_and_relation(catalog):
    units, views, macros = _current()
    at = next(i for i, u in enumerate(units) if u.table == "trajectory_signals")
    fill = units[at].fill.replace("FROM judgment_score_facts\n", "FROM judgment_scores\n")
    assert fill != units[at].fill
    units[at] = replace(units[at], fill=fill)
    line = fill[:fill.index("FROM judgment_scores\n")].count("\n") + 1
    assert layer_errors(units, views, macros, catalog) == [
        f"warehouse/facts/trajectory_signals/fill.sql:{line}: reads judgment_scores (views)"]


def test_a_fill_reading_a_later_fact_or_a_rule_reading_a_fact_fails(catalog):
    units, views, macros = _current()
    first = units[0]
    units[0] = replace(first, fill=first.fill + ";\nSELECT * FROM trajectory_signals")
    units[1] = replace(units[1], rules=(("batch", "-- x\nSELECT trajectory_id FROM trajectory_funnel_facts"),))
    errors = layer_errors(units, views, macros, catalog)
    assert f"{first.fill_path}:{first.fill.count(chr(10)) + 2}: reads trajectory_signals (facts)" in errors
    assert f"warehouse/facts/{units[1].table}/refresh_batch.sql:2: reads trajectory_funnel_facts (facts)" in errors
    assert len(errors) == 2


def test_a_view_reading_a_temp_table_of_the_load_or_a_macro_reading_a_view_fails(catalog):
    units, views, macros = _current()
    views["run_summary"] = views["run_summary"].replace("FROM trajectory_signals", "FROM incoming_changed", 1)
    macros[TABLE_MACROS] += "\nCREATE OR REPLACE MACRO leak() AS TABLE SELECT * FROM trajectory_forensics;"
    errors = layer_errors(units, views, macros, catalog)
    assert [e.split(": ", 1)[1] for e in errors] == ["reads trajectory_forensics (views)",
                                                     "reads incoming_changed (temp)"]
    assert errors[0].startswith(f"{TABLE_MACROS}:{macros[TABLE_MACROS].count(chr(10)) + 1}:")
    assert errors[1].startswith("warehouse/views/run_summary.sql:")


def test_every_refresh_rule_answers_a_batch_or_an_upserted_table():
    events = {event for unit in fact_units() for event, _ in unit.rules}
    assert events == {"batch", *UPSERT_KEYS}


def test_the_units_are_ordered_by_what_their_fills_read():
    order = [u.table for u in fact_units()]
    assert order.index("evidence_funnel_facts") < order.index("trajectory_funnel_facts")
    assert order.index("judgment_score_facts") < order.index("trajectory_signals")
    assert sorted(order) == sorted(p.name for p in (ROOT / "warehouse" / "facts").iterdir() if p.is_dir())


def test_page_threads_may_parse_the_fact_units_at_once():
    # The dashboard serves each page on its own thread, and the first pages of a process read the fact units together.
    import threading

    from trajscope.warehouse._sql_reads import statements

    texts = [(f.read_text(), str(f)) for f in sorted((ROOT / "warehouse" / "facts").rglob("*.sql"))]
    expected = [statements(text, name) for text, name in texts]
    failures: list[str] = []

    def parse_every_file() -> None:
        for _ in range(10):
            try:
                if [statements(text, name) for text, name in texts] != expected:
                    failures.append("a parse differs from the serial one")
            except ValueError as exc:
                failures.append(str(exc))

    threads = [threading.Thread(target=parse_every_file) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures, failures[:3]
