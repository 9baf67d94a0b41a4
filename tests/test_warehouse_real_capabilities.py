"""Real external logs through ingest and judge: what a log cannot support is NULL with its reason in every view."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from trajscope.cli import main as cli
from trajscope.engine.judge_pass import judge_run
from trajscope.warehouse import open_readonly

ROOT = Path(__file__).resolve().parents[1]
LOGS = ROOT.parent / "shared" / "data" / "external_logs"
FIREACT = LOGS / "fireact" / (
    "hotpotqa_dev_0_500_ft_gpt-3.5-turbo-0613_princeton-nlp__7woQRsdi_0.0_2023-09-21-16-19-51.json")
FIREACT_QUESTIONS = LOGS / "fireact" / "hotpotqa_dev_questions.json"
SWE = LOGS / "swe_agent" / "pydicom__pydicom-1458.traj"
FIREACT_RUN = f"react:{FIREACT.name}"
SWE_RUN = f"swe_agent:{SWE.name}"
NO_READ_ACTION = "no read action in this log: discipline metrics do not apply"


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("real") / "w.duckdb"
    runner = CliRunner()
    for args in (["ingest", str(FIREACT), "--questions", str(FIREACT_QUESTIONS)], ["ingest", str(SWE)]):
        result = runner.invoke(cli, [*args, "--db", str(path)])
        assert result.exit_code == 0, result.output
    return path


def _rows(db, sql: str, params=None) -> list[tuple]:
    with open_readonly(db) as con:
        return con.execute(sql, params or []).fetchall()


def test_fireact_has_no_read_action_so_no_wrong_answer_gets_a_discipline_label(db):
    raw = json.loads(FIREACT.read_text())
    report = judge_run(db, FIREACT_RUN, extractors=("regex",))
    assert report.n_trajectories == len(raw) and report.no_gold_skipped == 0
    (cap,) = _rows(db, "SELECT read_action, read_action_reason, profile_source FROM run_capabilities WHERE run_id = ?",
                   [FIREACT_RUN])
    assert cap[0] is False and cap[1].startswith(NO_READ_ACTION) and cap[2].startswith("recorded by the log")
    (n_wrong,) = _rows(db, "SELECT count(*) FROM trajectory_correctness WHERE run_id = ? AND NOT correct",
                       [FIREACT_RUN])[0]
    labels = _rows(db, "SELECT label, discipline_subtype, is_discipline, no_read, does_not_apply FROM failure_rg "
                       "WHERE run_id = ? AND extractor = 'regex'", [FIREACT_RUN])
    assert n_wrong > 0 and len(labels) == n_wrong
    assert all(r[0] != "discipline" and r[1:4] == (None, None, None) and r[4] == NO_READ_ACTION for r in labels)
    plane = _rows(db, "SELECT n_trajectories, n_disc, p_disc, p_disc_reason, p_post, p_post_reason FROM failure_plane "
                      "WHERE run_id = ? AND extractor = 'regex'", [FIREACT_RUN])
    assert len(plane) == 1 and plane[0][:5] == (len(raw), None, None, NO_READ_ACTION, None)
    assert "no gold passages" in plane[0][5] and "do not apply" in plane[0][5]


def test_a_log_without_gold_answers_gets_no_scores_and_says_why(db):
    report = judge_run(db, SWE_RUN, extractors=("regex",))
    assert (report.n_trajectories, report.no_gold_skipped, report.lexical_added) == (1, 1, 0)
    (row,) = _rows(db, "SELECT em, f1, contain_acc, llm_acc, scores_reason FROM run_summary WHERE run_id = ?",
                   [SWE_RUN])
    assert row[:4] == (None, None, None, None) and "correctness does not apply" in row[4]
    (corr,) = _rows(db, "SELECT correct, correct_reason FROM trajectory_correctness WHERE run_id = ?", [SWE_RUN])
    assert corr == (None, "no gold answer for this question: correctness does not apply")
    assert _rows(db, "SELECT count(*) FROM failure_rg WHERE run_id = ?", [SWE_RUN]) == [(0,)]
