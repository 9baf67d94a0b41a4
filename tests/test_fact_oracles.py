"""Each derived fact unit's fill on its hand-built oracle (tests/fixtures/facts/<table>/: input.sql rows of the tables
it reads, expected.json the rows worked out by hand), every unit with an oracle and every oracle with a unit; and
stored facts of another definition recomputed, with every later unit that reads them."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from foundation_records import fixture_trajectories

from trajscope.warehouse import ingest_trajectories, open_warehouse
from trajscope.warehouse._derived import fact_unit, facts_hash, refresh_facts
from trajscope.warehouse._fact_units import fact_units
from trajscope.warehouse.read._upgrade import upgrade_if_warehouse

ORACLES = Path(__file__).parent / "fixtures" / "facts"


def _rounded(value: object) -> object:
    if isinstance(value, float) and math.isfinite(value):
        return round(value, 9)
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    return value


def test_every_unit_has_an_oracle_and_every_oracle_a_unit():
    units = {u.table for u in fact_units()}
    oracles = {p.name for p in ORACLES.iterdir() if p.is_dir()}
    assert units == oracles
    assert all((ORACLES / name / "input.sql").is_file() and (ORACLES / name / "expected.json").is_file()
               for name in oracles)


@pytest.mark.parametrize("table", sorted(p.name for p in ORACLES.iterdir() if p.is_dir()))
def test_the_fill_gives_the_oracles_rows(table, tmp_path):
    expected = json.loads((ORACLES / table / "expected.json").read_text())
    columns = list(expected[0])
    with open_warehouse(tmp_path / "w.duckdb") as con:
        con.execute((ORACLES / table / "input.sql").read_text())
        refresh_facts(con, fact_unit(table), "SELECT trajectory_id FROM trajectories")
        cursor = con.execute(f"SELECT {', '.join(columns)} FROM {table} ORDER BY ALL")
        got = [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]
    assert [_rounded(r) for r in got] == [_rounded(r) for r in expected]


def test_facts_of_another_definition_are_recomputed_with_the_facts_that_read_them(tmp_path):
    db = tmp_path / "w.duckdb"
    ingest_trajectories(db, fixture_trajectories())
    with open_warehouse(db) as con:
        before = con.execute("SELECT trajectory_id, em, correct FROM trajectory_signals ORDER BY ALL").fetchall()
        # The signals' hash is current, but the verdicts they read were computed by another definition.
        con.execute("UPDATE judgment_score_facts SET em = 1 - em, contain = 1 - contain")
        con.execute("UPDATE trajectory_signals SET em = 1 - em, correct = NOT correct")
        con.execute("UPDATE derived_facts_state SET definition_hash = 'old' WHERE name = 'judgment_score_facts'")
    assert upgrade_if_warehouse(db) == "upgraded"
    with open_warehouse(db) as con:
        after = con.execute("SELECT trajectory_id, em, correct FROM trajectory_signals ORDER BY ALL").fetchall()
        assert after == before
        assert con.execute("SELECT definition_hash FROM derived_facts_state WHERE name = 'judgment_score_facts'"
                           ).fetchall() == [(facts_hash(fact_unit("judgment_score_facts")),)]
    assert any(em is not None for _, em, _ in before)
