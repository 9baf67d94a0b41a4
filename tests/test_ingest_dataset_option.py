"""`--dataset NAME` keys imported questions that name no benchmark, so two benchmarks' question 12s never meet."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from fixtures.forensics.builders import final, search, trajectory

import trajscope
from trajscope.cli import main as cli
from trajscope.format import RecordError, Run, write_jsonl
from trajscope.warehouse import open_readonly

TAU = Path("../shared/data/external_logs/formats/openai_chat_tool_calls/gpt-4o-airline.json")
FIREACT = Path("../shared/data/external_logs/fireact/"
               "hotpotqa_dev_0_500_ft_gpt-3.5-turbo-0613_princeton-nlp__7woQRsdi_0.0_2023-09-21-16-19-51.json")
TABLES = ("runs", "questions", "trajectories", "steps", "judgments")


def _tau_raw() -> tuple[int, set[str]]:
    """Trajectories and task ids of the τ-bench list (one record per task and trial)."""
    records = json.loads(TAU.read_text())
    return len(records), {str(r["task_id"]) for r in records}


def _fireact_raw() -> tuple[int, set[str]]:
    """Trajectories and question ids of the FireAct log (a dict keyed by HotpotQA dev index)."""
    records = json.loads(FIREACT.read_text())
    return len(records), set(records)


def _counts(db: Path) -> dict[str, int]:
    with open_readonly(db) as con:
        return {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}


def _questions(db: Path) -> dict[str, set[str]]:
    with open_readonly(db) as con:
        rows = con.execute("SELECT dataset, question_id FROM questions").fetchall()
    out: dict[str, set[str]] = {}
    for dataset, qid in rows:
        out.setdefault(dataset, set()).add(qid)
    return out


def _ingest(db: Path, *args: str):
    return CliRunner().invoke(cli, ["ingest", "--db", str(db), "--no-progress", *args])


def test_two_unnamed_benchmarks_meet_and_the_refusal_names_dataset(tmp_path):
    db = tmp_path / "w.duckdb"
    first = _ingest(db, str(TAU))
    assert first.exit_code == 0, first.output
    before = _counts(db)
    second = _ingest(db, str(FIREACT))
    assert second.exit_code != 0
    assert "(no dataset): conflicting gold_answer" in second.output
    assert "pass --dataset NAME" in second.output and "--per-run-questions" in second.output
    assert "nothing was written" in second.output
    assert _counts(db) == before


def test_dataset_keys_each_benchmark_apart(tmp_path):
    db = tmp_path / "w.duckdb"
    tau_trajectories, tau_tasks = _tau_raw()
    fireact_trajectories, fireact_questions = _fireact_raw()
    first = _ingest(db, "--dataset", "tau_bench_airline", str(TAU))
    assert first.exit_code == 0, first.output
    assert f"dataset: {tau_trajectories} trajectories keyed under 'tau_bench_airline' (--dataset)" in first.output
    second = _ingest(db, "--dataset", "fireact_hotpotqa", str(FIREACT))
    assert second.exit_code == 0, second.output
    assert f"dataset: {fireact_trajectories} trajectories keyed under 'fireact_hotpotqa'" in second.output
    assert (tau_trajectories, len(tau_tasks)) == (200, 50)  # 50 tasks x 4 trials
    questions = _questions(db)
    assert questions == {"tau_bench_airline": tau_tasks, "fireact_hotpotqa": fireact_questions}
    assert _counts(db)["trajectories"] == tau_trajectories + fireact_trajectories
    with open_readonly(db) as con:
        runs = dict(con.execute("SELECT run_id, dataset FROM runs").fetchall())
    assert sorted(set(runs.values())) == ["fireact_hotpotqa", "tau_bench_airline"]


def test_the_python_api_takes_dataset(tmp_path):
    db = tmp_path / "w.duckdb"
    tau_trajectories, tau_tasks = _tau_raw()
    lines: list[str] = []
    report = trajscope.ingest([TAU], db=db, dataset="tau_bench_airline", echo=lines.append)
    assert report.summary().startswith(f"{tau_trajectories} trajectories")
    assert any("keyed under 'tau_bench_airline'" in line for line in lines)
    assert _questions(db) == {"tau_bench_airline": tau_tasks}


def _mixed_log(path: Path) -> Path:
    """Question "0" three times: a run naming hotpotqa_dev, a question naming musique, and one naming nothing."""
    own_run = trajectory(Run(run_id="own_run", dataset="hotpotqa_dev"), "0", "Who?", "Ann", [search(), final("Ann")])
    own_question = trajectory(Run(run_id="own_question"), "0", "Which river?", "Rhone", [final("Rhone")])
    own_question.question.dataset = "musique"
    bare = trajectory(Run(run_id="bare"), "0", "Which task?", "refund", [final("refund")])
    bare.question.dataset = ""  # an empty name names nothing, as the loader reads it
    with open(path, "wb") as fh:
        write_jsonl([own_run, own_question, bare], fh)
    return path


def test_a_record_naming_its_own_dataset_keeps_it_and_the_report_says_so(tmp_path):
    db = tmp_path / "w.duckdb"
    log = _mixed_log(tmp_path / "mixed.jsonl")
    result = _ingest(db, "--format", "canonical", "--dataset", "tau_bench_airline", str(log))
    assert result.exit_code == 0, result.output
    assert "dataset: 1 trajectories keyed under 'tau_bench_airline'" in result.output
    assert "2 trajectories keep the dataset their record names ('hotpotqa_dev' 1, 'musique' 1)" in result.output
    assert _questions(db) == {"hotpotqa_dev": {"0"}, "musique": {"0"}, "tau_bench_airline": {"0"}}
    with open_readonly(db) as con:
        runs = dict(con.execute("SELECT run_id, dataset FROM runs").fetchall())
    assert runs == {"own_run": "hotpotqa_dev", "own_question": None, "bare": "tau_bench_airline"}


def test_an_empty_or_run_shaped_name_is_refused(tmp_path):
    log = _mixed_log(tmp_path / "mixed.jsonl")
    for name in ("  ", "run:x"):
        with pytest.raises(RecordError, match="dataset"):
            trajscope.ingest([log], db=tmp_path / "w.duckdb", dataset=name, echo=None)
