"""Rules that engine and warehouse both apply, each defined once: a second definition fails here."""
from __future__ import annotations

import re

import duckdb
import pytest
from foundation_records import fixture_trajectories
from test_definitions_once import PY, SQL, _assigned, _functions

from trajscope.engine.audit import gold_is_auditable
from trajscope.format import (
    END_REASONS,
    FORCED_END_REASONS,
    GAVE_UP_END_REASONS,
    Passage,
    ReadStep,
    SearchStep,
    counts_as_read,
    end_reason_description,
)
from trajscope.warehouse import ingest_trajectories, open_readonly
from trajscope.warehouse._definitions import definitions_sql

MEASURES = "warehouse/definitions/measures.sql"


@pytest.fixture(scope="module")
def macros() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute(definitions_sql())
    return con


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory):
    db = tmp_path_factory.mktemp("once") / "w.duckdb"
    ingest_trajectories(db, fixture_trajectories())
    with open_readonly(db) as con:
        yield con


def _offenders(pattern: str, sources: dict[str, str], exempt: tuple[str, ...] = ()) -> list[str]:
    rule = re.compile(pattern, re.I)
    return [f"{path}:{text.count(chr(10), 0, m.start()) + 1}" for path, text in sources.items() if path not in exempt
            for m in rule.finditer(text)]


def test_the_short_gold_rule_is_one_constant_both_sides_read(macros):
    assert _assigned("MIN_GOLD_CHARS") == ["trajscope/format/_definitions.py"]
    assert _offenders(r"length\([^)]*gold[^)]*\)\s*[<>]=?\s*\d", SQL) == []
    assert _offenders(r"len\([^)]*gold[^)]*\)\s*[<>]=?\s*\d", PY) == []
    for gold, short in (("", True), ("a", True), (" b ", True), ("ab", False), ("1979", False)):
        assert macros.execute("SELECT gold_too_short(trim(?))", [gold]).fetchone()[0] is short, gold
        assert gold_is_auditable(gold) is not short, gold


def test_a_read_counts_only_with_a_passage_by_one_rule_on_each_side(macros):
    assert _functions(r"counts_as_read") == ["trajscope/format/_definitions.py:counts_as_read"]
    assert _offenders(r"isinstance\(\w+, ReadStep\) and \w+\.passages|bool\(\w+\.passages\)", PY,
                      exempt=("trajscope/format/_definitions.py",)) == []
    assert _offenders(r"'read'\s+AND\s+(coalesce\()?len\(", SQL, exempt=(MEASURES,)) == []
    passage = Passage(chunk_id="c1", text="t", is_new=True)
    steps = [ReadStep(tool_name="read", args={}, chunk_ids=["c1"], passages=[passage]),
             ReadStep(tool_name="read", args={}, chunk_ids=["zz"], passages=[]),
             SearchStep(tool_name="search", args={}, query="q", candidates=[])]
    assert [counts_as_read(s) for s in steps] == [True, False, False]
    rows = macros.execute("SELECT is_counted_read(k, p) FROM (VALUES ('read', [1]), ('read', []), ('read', NULL), "
                          "('search', [1])) t(k, p)").fetchall()
    assert [r[0] for r in rows] == [True, False, False, False]


def test_end_reason_has_one_description_on_every_column(warehouse):
    assert set(FORCED_END_REASONS) | set(GAVE_UP_END_REASONS) | {"final", "error"} == set(END_REASONS)
    assert _offenders(r"COMMENT ON COLUMN \w+\.\w*end_reason IS", SQL) == []
    columns = warehouse.execute("SELECT table_name, column_name, comment FROM duckdb_columns() WHERE NOT internal "
                                "AND column_name IN ('end_reason', 'child_end_reason')").fetchall()
    assert {"trajectories", "trajectory_signals", "failure_rg", "fork_pairs"} <= {t for t, _, _ in columns}
    for table, column, comment in columns:
        subject = "the child" if column == "child_end_reason" else "the trajectory"
        assert comment == end_reason_description(subject), f"{table}.{column}: {comment}"
        assert all(reason in comment for reason in END_REASONS), f"{table}.{column}"


def test_the_zero_read_measure_has_one_name(warehouse):
    assert _offenders(r"\bzero_read_rate\b", {**PY, **SQL}) == []
    by_type = warehouse.execute(
        "SELECT run_id, sum(zero_read_final_rate * n) / sum(n) FROM type_breakdown "
        "WHERE zero_read_final_rate IS NOT NULL GROUP BY run_id ORDER BY run_id").fetchall()
    per_run = dict(warehouse.execute("SELECT run_id, zero_read_final_rate FROM run_summary").fetchall())
    assert by_type
    for run_id, rate in by_type:
        assert rate == pytest.approx(per_run[run_id]), run_id


def test_does_not_apply_is_said_once(macros, warehouse):
    assert _offenders(r"'does not apply: '\s*\|\|", SQL, exempt=(MEASURES,)) == []
    said = [macros.execute("SELECT not_applicable(?)", [r]).fetchone()[0] for r in ("no read action",
                                                                               "does not apply: no read action")]
    assert said == ["does not apply: no read action"] * 2
    columns = warehouse.execute("SELECT c.table_name, c.column_name FROM duckdb_columns() c JOIN duckdb_views() v "
                                "ON v.view_name = c.table_name AND NOT v.internal WHERE c.data_type = 'VARCHAR' "
                                "AND c.column_name LIKE '%reason%'").fetchall()
    assert len(columns) > 5
    for view, column in columns:
        doubled = warehouse.execute(f'SELECT count(*) FROM "{view}" WHERE "{column}" ILIKE '
                                    "'%does not apply%does not apply%'").fetchone()[0]
        assert doubled == 0, f"{view}.{column}"
