"""The verdicts stored per trajectory (judgment_score_facts, read by judgment_scores) equal the per-query definition
they replaced, on the fixtures and after everything that changes them: a judge pass, a re-ingested record with other
verdicts, several judge models, and a warehouse whose facts are missing or were computed by another definition."""
from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from foundation_records import fixture_trajectories
from msgspec.structs import replace

from trajscope.cli import main as cli
from trajscope.format import Judgment
from trajscope.warehouse import ingest_trajectories, open_readonly, open_warehouse
from trajscope.warehouse._derived import fact_unit, facts_hash
from trajscope.warehouse.read._upgrade import upgrade_if_warehouse

REFERENCE = Path(__file__).parent / "fixtures" / "facts" / "judgment_score_facts" / "judgment_scores_per_query.sql"
COLUMNS = "trajectory_id, em, f1, contain, llm"


def _reference_query() -> str:
    """The view's SELECT before migration 0018: every trajectory's verdicts grouped from judgments per query."""
    body = REFERENCE.read_text().split("CREATE OR REPLACE VIEW judgment_scores AS", 1)[1]
    return body.split("\nCOMMENT ON", 1)[0].strip().rstrip(";")


def _rows(db: Path, sql: str) -> list[tuple]:
    with open_readonly(db) as con:
        return con.execute(sql).fetchall()


def _assert_current(db: Path) -> None:
    stored = _rows(db, f"SELECT {COLUMNS} FROM judgment_scores ORDER BY trajectory_id")
    reference = _rows(db, f"SELECT {COLUMNS} FROM ({_reference_query()}) ORDER BY trajectory_id")
    assert stored == reference
    assert stored, "the fixture has verdicts"


def _two_models() -> list:
    """The fixtures, with one trajectory judged by two LLM models and one em verdict restated."""
    trajectories = fixture_trajectories()
    first = trajectories[1]
    trajectories[1] = replace(first, judgments=[*first.judgments, Judgment(judge="llm", score=1.0, judge_model="A"),
                                                Judgment(judge="llm", score=0.0, judge_model="B"),
                                                Judgment(judge="em", score=1.0)])
    return trajectories


@pytest.fixture
def db(tmp_path) -> Path:
    path = tmp_path / "w.duckdb"
    ingest_trajectories(path, _two_models())
    return path


def test_stored_verdicts_equal_the_per_query_definition(db):
    _assert_current(db)
    assert _rows(db, "SELECT llm FROM judgment_scores WHERE trajectory_id = 'run_a::q2'") == [(0.5,)]


def test_a_judge_pass_updates_the_stored_verdicts(db):
    with open_warehouse(db) as con:  # verdicts a judge pass will overrule: the record's own are dropped first
        con.execute("DELETE FROM judgments WHERE trajectory_id = 'run_a::q3'")
        con.execute("DELETE FROM judgment_score_facts WHERE trajectory_id = 'run_a::q3'")
    assert _rows(db, "SELECT count(*) FROM judgment_scores WHERE trajectory_id = 'run_a::q3'") == [(0,)]
    result = CliRunner().invoke(cli, ["judge", "run_a", "--db", str(db)])
    assert result.exit_code == 0, result.output
    assert _rows(db, "SELECT contain FROM judgment_scores WHERE trajectory_id = 'run_a::q3'") == [(0.0,)]
    _assert_current(db)


def test_a_reingested_record_replaces_its_stored_verdicts(db):
    changed = _two_models()
    changed[0] = replace(changed[0], final_answer="Lyon", judgments=[Judgment(judge="em", score=0.0)])
    ingest_trajectories(db, changed)
    assert _rows(db, "SELECT em, contain FROM judgment_scores WHERE trajectory_id = 'run_a::q1'") == [(0.0, None)]
    _assert_current(db)


def test_facts_of_another_definition_are_recomputed_on_the_next_open(db, monkeypatch):
    monkeypatch.setattr("trajscope.warehouse._derived._RECOMPUTE_SLICE", 2)  # several slices, as at scale
    with open_warehouse(db) as con:  # as older code would have left them: other numbers, another hash
        con.execute("UPDATE judgment_score_facts SET em = 7")
        con.execute("UPDATE derived_facts_state SET definition_hash = 'old' WHERE name = 'judgment_score_facts'")
    assert upgrade_if_warehouse(db) == "upgraded"
    assert _rows(db, "SELECT definition_hash FROM derived_facts_state WHERE name = 'judgment_score_facts'") == [
        (facts_hash(fact_unit("judgment_score_facts")),)]
    _assert_current(db)


def test_migration_fills_the_facts_of_an_existing_warehouse(db):
    with open_warehouse(db) as con:  # back to schema 17: no stored verdicts
        con.execute("DROP VIEW IF EXISTS judgment_scores CASCADE")
        con.execute("DROP TABLE judgment_score_facts")
        con.execute("DELETE FROM derived_facts_state WHERE name = 'judgment_score_facts'")
        con.execute("DELETE FROM schema_migrations WHERE version >= 18")
        con.execute("DELETE FROM views_state")
    with open_warehouse(db):
        pass
    _assert_current(db)
