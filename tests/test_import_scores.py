"""An imported log with a gold answer and no verdict of its own is scored at import (em / f1 / contain, origin
'import'), so correctness, the rules and `agreement --human` need no `trajscope judge` first; a log's own verdict
is kept and never counted as one the importer made."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from trajscope.analysis.queries import step_label_agreement
from trajscope.cli import main as cli
from trajscope.warehouse import open_readonly

DEV = Path(__file__).resolve().parents[2] / "shared" / "data" / "external_logs" / "agentprocessbench_dev"


def _ingest(*args: str) -> str:
    result = CliRunner().invoke(cli, ["ingest", *args])
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture(scope="module")
def dev(tmp_path_factory) -> tuple[Path, str]:
    db = tmp_path_factory.mktemp("scores") / "w.duckdb"
    out = _ingest(str(DEV / "hotpotqa_dev50.jsonl"), "--db", str(db))
    assert "judgments found: none (0 trajectories); em / f1 / contain scored at import for 50" in out
    with open_readonly(db) as con:
        (run,) = con.execute("SELECT DISTINCT run_id FROM trajectories").fetchone()
    return db, run


def test_every_trajectory_is_scored_at_import_and_none_counts_as_the_logs_verdict(dev):
    db, _ = dev
    with open_readonly(db) as con:
        rows = con.execute("SELECT origin, judge, count(*) FROM judgments GROUP BY ALL ORDER BY ALL").fetchall()
        judgments, reason = con.execute("SELECT judgments, judgments_reason FROM run_capabilities").fetchone()
    assert rows == [("import", "contain", 50), ("import", "em", 50), ("import", "f1", 50)]
    assert judgments is False and "no verdicts" in reason


def test_correctness_agrees_with_the_peoples_final_label_on_47_of_50(dev):
    db, _ = dev
    people = {str(r["total_index"]): r["final_label"] == 1
              for r in map(json.loads, (DEV / "hotpotqa_dev50.jsonl").open(encoding="utf-8"))}
    with open_readonly(db) as con:
        # The importer names each record by its total_index, after the run's name.
        ours = dict(con.execute("SELECT split_part(trajectory_id, '::', 2), correct "
                                "FROM trajectory_correctness").fetchall())
    assert set(ours) == set(people) and None not in ours.values()
    agree = sum(ours[k] == people[k] for k in people)
    assert agree >= 47, agree
    # Each disagreement is an answer people accepted that Contain-Acc cannot (a shorter or rephrased gold).
    assert all(people[k] and not ours[k] for k in people if ours[k] != people[k])


def test_the_rules_beat_the_gold_aware_baseline_with_no_judge_pass(dev):
    db, run = dev
    with open_readonly(db) as con:
        methods = {m.method: m for m in step_label_agreement(con, run).methods}
    rules = methods["rules"].first_error_accuracy.value
    assert rules > methods["baseline:final_if_wrong"].first_error_accuracy.value == pytest.approx(0.82)


def _chat_record(gold: str, answer: str) -> dict:
    call = {"id": "c1", "type": "function", "function": {"name": "search", "arguments": '{"query": "capital"}'}}
    return {"question": "Which city?", "golden_answers": [gold], "messages": [
        {"role": "user", "content": "Which city?"},
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "Paris is the capital of France."},
        {"role": "assistant", "content": f"<answer>{answer}</answer>"}]}


def test_import_scores_keep_their_origin_through_an_export_and_back(tmp_path):
    log = tmp_path / "chat.jsonl"
    log.write_text(json.dumps(_chat_record("Paris", "Paris")) + "\n", encoding="utf-8")
    db = tmp_path / "w.duckdb"
    _ingest(str(log), "--db", str(db))
    with open_readonly(db) as con:
        (run,) = con.execute("SELECT DISTINCT run_id FROM trajectories").fetchone()
        assert con.execute("SELECT judge, score FROM judgments ORDER BY judge").fetchall() == [
            ("contain", 1.0), ("em", 1.0), ("f1", 1.0)]
    export = tmp_path / "run.atif.jsonl"
    result = CliRunner().invoke(cli, ["export-traces", run, "--format", "atif", "--out", str(export), "--db", str(db)])
    assert result.exit_code == 0, result.output
    # The export carries the scores with their mark: loaded again they are the importer's, not the log's verdicts,
    # and nothing is scored twice.
    again = tmp_path / "again.duckdb"
    out = _ingest(str(export), "--run-id", run, "--db", str(again))
    assert "judgments found: none (0 trajectories); em / f1 / contain scored at import for 1" in out
    with open_readonly(again) as con:
        assert con.execute("SELECT origin, count(*) FROM judgments GROUP BY ALL").fetchall() == [("import", 3)]
        assert con.execute("SELECT judgments FROM run_capabilities").fetchone() == (False,)


def test_a_records_benchmark_keeps_its_question_ids_apart_from_another_logs(tmp_path):
    # Both logs number their questions; the dev split's records name their benchmark (data_source), FireAct's none.
    db = tmp_path / "w.duckdb"
    _ingest(str(DEV / "hotpotqa_dev50.jsonl"), "--db", str(db))
    fireact = next((DEV.parent / "fireact").glob("hotpotqa_dev_0_500_*.json"))
    _ingest(str(fireact), "--db", str(db))
    sources = {r["data_source"] for r in map(json.loads, (DEV / "hotpotqa_dev50.jsonl").open(encoding="utf-8"))}
    with open_readonly(db) as con:
        datasets = dict(con.execute("SELECT coalesce(dataset, ''), count(*) FROM questions GROUP BY 1").fetchall())
    assert set(datasets) - {""} == sources and datasets[sources.pop()] == 50
