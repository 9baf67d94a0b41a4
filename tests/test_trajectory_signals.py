"""The signals stored per trajectory (trajectory_signals) give every view that reads them the rows of the per-query
definitions they replaced (tests/fixtures/facts/trajectory_signals/per_query): on the taxonomy's hand-built cases,
before and after a judge pass, after a re-ingested record, a question upsert, facts of another definition, and the
migration."""
from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
from foundation_records import fixture_trajectories
from msgspec.structs import replace
from test_taxonomy import _erag_branches, _no_read_action_cases, _priority_cases, _read_gate_branches

from trajscope.engine.judge_pass import judge_run
from trajscope.format import Question, Run
from trajscope.warehouse import ingest_trajectories, load_questions, open_readonly, open_warehouse
from trajscope.warehouse._derived import fact_unit, facts_hash
from trajscope.warehouse.read._upgrade import upgrade_if_warehouse

REFERENCE = Path(__file__).parent / "fixtures" / "facts" / "trajectory_signals" / "per_query"
# Dependencies first: a reference view reads the references before it, never the stored signals.
VIEWS = ("trajectory_scores", "trajectory_facts", "trajectory_correctness", "trajectory_forensics",
         "run_capabilities", "run_summary")
RUNS = {"rg": Run(run_id="rg", dataset="hotpotqa", condition="baseline"),
        "erag": Run(run_id="erag", dataset="musique", condition="register"),
        "prio": Run(run_id="prio", dataset="2wikimultihopqa", condition="mixed"),
        "vrag": Run(run_id="vrag", dataset="hotpotqa", controller="vanilla_rag", condition="k5",
                    config={"read_action": False})}


def _reference_body(view: str) -> str:
    """The view's SELECT before migration 0019, reading the other references instead of the named views."""
    text = (REFERENCE / f"{view}_per_query.sql").read_text()
    body = text.split(f"CREATE OR REPLACE VIEW {view} AS", 1)[1].split("\nCOMMENT ON", 1)[0].strip().rstrip(";")
    for other in VIEWS:
        body = re.sub(rf"\b{other}\b", f"ref_{other}", body)
    return body


def _rounded(row: tuple) -> tuple:
    # The same sums over the same rows, maybe in another order: equal to 10 significant digits.
    return tuple(float(f"{v:.10g}") if isinstance(v, float) and math.isfinite(v) else v for v in row)


def _assert_current(db: Path) -> None:
    with open_readonly(db, sandboxed=False) as con:
        for view in VIEWS:
            con.execute(f"CREATE TEMP VIEW ref_{view} AS {_reference_body(view)}")
        for view in VIEWS:
            columns = [r[0] for r in con.execute(f"DESCRIBE ref_{view}").fetchall()]
            listed = ", ".join(columns)
            stored = sorted(map(_rounded, con.execute(f"SELECT {listed} FROM {view}").fetchall()), key=repr)
            reference = sorted(map(_rounded, con.execute(f"SELECT {listed} FROM ref_{view}").fetchall()), key=repr)
            assert stored == reference, view
            assert stored, view
        assert con.execute("SELECT count(*) FROM trajectory_signals").fetchone() == \
            con.execute("SELECT count(*) FROM trajectories").fetchone()


def _records() -> list:
    return (_read_gate_branches(RUNS["rg"]) + _erag_branches(RUNS["erag"]) + _priority_cases(RUNS["prio"])
            + _no_read_action_cases(RUNS["vrag"]) + fixture_trajectories())


@pytest.fixture
def db(tmp_path) -> Path:
    path = tmp_path / "w.duckdb"
    ingest_trajectories(path, _records())
    return path


def _judge_all(db: Path) -> None:
    for run_id in RUNS:
        judge_run(db, run_id)


def _scalar(db: Path, sql: str):
    with open_readonly(db) as con:
        return con.execute(sql).fetchone()[0]


def test_stored_signals_equal_the_per_query_definitions_before_and_after_judging(db):
    _assert_current(db)
    assert _scalar(db, "SELECT count(*) FROM trajectory_forensics WHERE run_id = 'rg' AND answer_checked") == 0
    _judge_all(db)
    # The judge pass wrote answer checks and verdicts: the signals of its trajectories follow.
    assert _scalar(db, "SELECT count(*) FROM trajectory_forensics WHERE run_id = 'rg' AND NOT answer_checked") == 0
    assert _scalar(db, "SELECT count(*) FROM failure_rg WHERE run_id = 'rg' AND label = 'discipline'") > 0
    _assert_current(db)


def test_a_reingested_record_replaces_its_signals(db):
    _judge_all(db)
    changed = _records()
    index = next(i for i, t in enumerate(changed) if t.trajectory_id.endswith("rg_correct"))
    changed[index] = replace(changed[index], final_answer="Boulder", steps=changed[index].steps[:-1])
    ingest_trajectories(db, changed)
    tid = changed[index].trajectory_id
    assert _scalar(db, f"SELECT final_answer FROM trajectory_facts WHERE trajectory_id = '{tid}'") == "Boulder"
    _assert_current(db)


def test_a_question_upsert_updates_the_signals_of_its_trajectories(db):
    _judge_all(db)
    tid, dataset, qid = _scalar(db, "SELECT [trajectory_id, dataset, question_id] FROM trajectories "
                                    "WHERE run_id = 'rg' ORDER BY trajectory_id LIMIT 1")
    load_questions(db, [Question(question_id=qid, text="restated", dataset=dataset, gold_answer="",
                                 question_type="restated-type", hop_count=7)], dataset)
    assert _scalar(db, f"SELECT [question_type, CAST(hop_count AS VARCHAR)] FROM trajectory_facts "
                       f"WHERE trajectory_id = '{tid}'") == ["restated-type", "7"]
    _assert_current(db)


def test_signals_of_another_definition_are_recomputed_on_the_next_open(db, monkeypatch):
    _judge_all(db)
    monkeypatch.setattr("trajscope.warehouse._derived._RECOMPUTE_SLICE", 3)  # several slices, as at scale
    with open_warehouse(db) as con:  # as older code would have left them: other numbers, another hash
        con.execute("UPDATE trajectory_signals SET read_count = 99, correct = NULL")
        con.execute("UPDATE derived_facts_state SET definition_hash = 'old' WHERE name = 'trajectory_signals'")
    assert upgrade_if_warehouse(db) == "upgraded"
    assert _scalar(db, "SELECT definition_hash FROM derived_facts_state WHERE name = 'trajectory_signals'") == \
        facts_hash(fact_unit("trajectory_signals"))
    _assert_current(db)


def test_migration_fills_the_signals_of_an_existing_warehouse(db):
    _judge_all(db)
    with open_warehouse(db) as con:  # back to schema 18: no stored signals
        for view in VIEWS:
            con.execute(f"DROP VIEW IF EXISTS {view} CASCADE")
        con.execute("DROP TABLE trajectory_signals")
        con.execute("DELETE FROM derived_facts_state WHERE name = 'trajectory_signals'")
        con.execute("DELETE FROM schema_migrations WHERE version >= 19")
        con.execute("DELETE FROM views_state")
    with open_warehouse(db):
        pass
    _assert_current(db)


def test_the_signals_read_the_stored_verdicts_and_the_register_macro_never_a_view():
    reads = fact_unit("trajectory_signals").reads
    # The macro and the fact the views register_item_resolution and judgment_scores read; trajectory_forensics is
    # only named in the fill's comments.
    assert {"register_item_resolution_rows", "judgment_score_facts"} <= reads
    assert not reads & {"register_item_resolution", "judgment_scores", "trajectory_forensics"}


def test_a_refresh_reaches_every_later_derived_table_that_reads_it(monkeypatch):
    from trajscope.warehouse import _derived

    assert _derived._facts_read(_derived.fact_unit("trajectory_signals")) == {"judgment_score_facts"}
    assert _derived._facts_read(_derived.fact_unit("trajectory_funnel_facts")) == {"evidence_funnel_facts"}
    done = []
    monkeypatch.setattr(_derived, "refresh_facts", lambda con, derived, sql, *fresh: done.append(derived.table))
    _derived.refresh_verdict_facts(None, "SELECT 'x' AS trajectory_id")
    assert done == ["judgment_score_facts", "trajectory_signals"]
    done.clear()
    _derived.refresh_with_dependents(None, _derived.fact_unit("evidence_funnel_facts"), "SELECT 'x' AS trajectory_id")
    assert done == ["evidence_funnel_facts", "trajectory_funnel_facts"]  # the walk reads the funnel facts
    done.clear()
    _derived.refresh_on(None, "chunks")  # a corpus upsert reaches the walk too
    assert done == ["evidence_funnel_facts", "trajectory_funnel_facts"]
