"""The benchmarks' own agreement metrics (`trajscope agreement --human`): per-step label scores as
AgentProcessBench's script computes them, the trivial baselines, imported methods (`ingest --labels --method`)
and McNemar between two methods; hand-built fixtures with every label known, then the real dev split."""
from __future__ import annotations

import csv
import io
import itertools
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.proportion import proportion_confint

from trajscope.analysis.queries import step_label_agreement
from trajscope.cli import main as cli
from trajscope.warehouse import open_readonly

# Four 3-step searches (assistant messages 2, 4, 6; the last one answers). People's labels per message and the
# gold: q1 right and fine, q2 wrong from its second search, q3 wrong at the answer (a neutral search before
# it), q4 right though its first search was an error.
TRAJECTORIES = {
    "q1": ("Paris", "Paris", {"2": 1, "4": 1, "6": 1}),
    "q2": ("Berlin", "Munich", {"2": 1, "4": -1, "6": -1}),
    "q3": ("Rome", "Milan", {"2": 1, "4": 0, "6": -1}),
    "q4": ("Oslo", "Oslo", {"2": -1, "4": 1, "6": 1}),
}
# A judge's released predictions keyed by dataset position (q4 has none: a failed annotation).
PREDICTED = {"q1": {"2": 1, "4": 1, "6": 1}, "q2": {"2": 1, "4": -1, "6": -1}, "q3": {"2": 1, "4": 1, "6": 1}}


def _messages(question: str, answer: str) -> list[dict]:
    def call(k: int, query: str) -> dict:
        return {"role": "assistant", "content": "",
                "tool_calls": [{"id": f"c{k}", "type": "function",
                                "function": {"name": "search", "arguments": json.dumps({"query": query})}}]}
    return [{"role": "system", "content": "You answer questions."}, {"role": "user", "content": question},
            call(1, question), {"role": "tool", "name": "search", "content": "Doc 1 (Title: A) some text"},
            call(2, question + " again"), {"role": "tool", "name": "search", "content": "Doc 1 (Title: B) more"},
            {"role": "assistant", "content": f"<answer>{answer}</answer>"}]


def _write_fixture(folder: Path) -> tuple[Path, Path, Path]:
    log, labels, predictions = folder / "chat.jsonl", folder / "labels.jsonl", folder / "judge.jsonl"
    with log.open("w") as f:
        for k, (qid, (gold, answer, _)) in enumerate(TRAJECTORIES.items()):
            f.write(json.dumps({"id": qid, "question": f"Question {qid}?", "ground_truth": gold,
                                "query_index": k, "sample_index": 0,
                                "messages": _messages(f"Question {qid}?", answer)}) + "\n")
    with labels.open("w") as f:
        for qid, (_, _, marks) in TRAJECTORIES.items():
            f.write(json.dumps({"id": qid, "step_labels": {f"message:{m}": v for m, v in marks.items()}}) + "\n")
    with predictions.open("w") as f:
        for k, qid in enumerate(TRAJECTORIES):
            f.write(json.dumps({"query_index": k, "sample_index": 0, "step_labels": PREDICTED.get(qid, {}),
                                "final_label": 1}) + "\n")
    return log, labels, predictions


def _invoke(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture(scope="module")
def fixture_db(tmp_path_factory) -> tuple[Path, str]:
    folder = tmp_path_factory.mktemp("benchmarks")
    log, labels, predictions = _write_fixture(folder)
    db = folder / "w.duckdb"
    _invoke("ingest", str(log), "--labels", str(labels), "--db", str(db))
    out = _invoke("ingest", "--labels", str(predictions), "--method", "judgeX", "--db", str(db))
    assert "predictions of method judgeX" in out and "9 label(s) on 3 trajectory(ies)" in out
    with open_readonly(db) as con:
        (run,) = con.execute("SELECT DISTINCT run_id FROM trajectories").fetchone()
    _invoke("judge", run, "--db", str(db))  # Contain-Acc: trajscope's verdict, which final_if_wrong reads
    return db, run


def _by_method(db: Path, run: str) -> dict:
    with open_readonly(db) as con:
        return {m.method: m for m in step_label_agreement(con, run).methods}


# Each method's (matching labelled steps of 12, exact maps of 4, first errors of 4), counted by hand above.
EXPECTED = {
    "baseline:all_fine": (7, 1, 1),
    "baseline:final": (7, 0, 1),
    "baseline:final_if_wrong": (9, 1, 2),
    "baseline:first": (5, 1, 1),
    "judgeX": (7, 2, 2),
}


@pytest.mark.parametrize("method", sorted(EXPECTED))
def test_per_step_scores_match_the_hand_counts(fixture_db, method):
    db, run = fixture_db
    got = _by_method(db, run)[method]
    steps, exact, first = EXPECTED[method]
    assert got.n == 4 and got.step_accuracy.n == 12
    assert got.step_accuracy.value == pytest.approx(steps / 12)
    assert got.exact.value == pytest.approx(exact / 4)
    assert got.first_error_accuracy.value == pytest.approx(first / 4)
    low, high = proportion_confint(first, 4, alpha=0.05, method="wilson")
    assert (got.first_error_accuracy.low, got.first_error_accuracy.high) == pytest.approx((low, high))
    assert got.step_accuracy.low <= got.step_accuracy.value <= got.step_accuracy.high


def test_the_uniform_baseline_is_the_exact_expectation(fixture_db):
    db, run = fixture_db
    got = _by_method(db, run)["baseline:uniform"]
    # Naming step j of 3 (every other step fine): first-error hits only where people's first error is j,
    # i.e. q2 (j = 1), q3 (j = 2), q4 (j = 0), each with probability 1/3; q1 (no error) never.
    assert got.first_error_accuracy.value == pytest.approx((3 * (1 / 3)) / 4)
    # Exact maps: q2 never (two -1), q3 never (a neutral), q4 with j = 0 only.
    assert got.exact.value == pytest.approx((1 / 3) / 4)
    # Step accuracy: every one of the 3^4 equally likely choices enumerated; its mean and central 95% range.
    def matches(marks: dict, j: int) -> int:
        return sum((-1 if k == j else 1) == v for k, v in enumerate(marks.values()))
    sums = sorted(sum(matches(TRAJECTORIES[q][2], j) for q, j in zip(TRAJECTORIES, choice, strict=True))
                  for choice in itertools.product(range(3), repeat=4))
    assert got.step_accuracy.value == pytest.approx(sum(sums) / len(sums) / 12)
    low = next(v for v in sums if sum(x <= v for x in sums) / len(sums) >= 0.025)
    high = next(v for v in sums if sum(x <= v for x in sums) / len(sums) >= 0.975)
    assert (got.step_accuracy.low, got.step_accuracy.high) == pytest.approx((low / 12, high / 12))


def test_mcnemar_between_two_methods_agrees_with_statsmodels(fixture_db):
    db, run = fixture_db
    with open_readonly(db) as con:
        result = step_label_agreement(con, run).versus("judgeX", "baseline:first")
    # First-error hits: judgeX q1, q2; baseline:first q4 -> judgeX only 2, first only 1, both 0, neither 1.
    assert (result.a_only, result.b_only) == (2, 1)
    assert result.exact_p == pytest.approx(mcnemar([[0, 2], [1, 1]], exact=True).pvalue)


def test_agreement_human_csv_has_one_row_per_method(fixture_db):
    db, run = fixture_db
    out = CliRunner().invoke(cli, ["agreement", "--human", run, "--format", "csv", "--db", str(db)])
    assert out.exit_code == 0, out.output
    rows = list(csv.DictReader(io.StringIO(out.stdout)))
    assert list(rows[0])[:6] == ["method", "n", "step_accuracy", "step_accuracy_low", "step_accuracy_high", "exact"]
    by = {r["method"]: r for r in rows}
    assert set(EXPECTED) | {"baseline:uniform", "rules"} <= set(by)
    assert float(by["judgeX"]["first_error_accuracy"]) == pytest.approx(0.5)
    assert by["judgeX"]["agent_accuracy"] == ""  # per-step labels name no agent


# --- the real dev split: every figure recomputed from the raw files ------------------------------------------

DEV = Path("../shared/data/external_logs/agentprocessbench_dev")


def _first_minus_one(labels: dict) -> int | None:
    return min((int(k) for k, v in labels.items() if v == -1), default=None)


def _raw_scores(reference: dict[int, dict], predicted: dict[int, dict]) -> tuple[float, float, float]:
    """The benchmark's compare: micro step accuracy (a missing label wrong), exact map, first -1 equal."""
    steps = sum(len(r["step_labels"]) for r in reference.values())
    hits = exact = first = 0
    for key, ref in reference.items():
        mine = predicted.get(key, {})
        hits += sum(mine.get(k) == v for k, v in ref["step_labels"].items())
        exact += mine == ref["step_labels"]
        first += _first_minus_one(mine) == _first_minus_one(ref["step_labels"])
    return hits / steps, exact / len(reference), first / len(reference)


@pytest.fixture(scope="module")
def dev_db(tmp_path_factory) -> tuple[Path, str, dict[str, Path]]:
    db = tmp_path_factory.mktemp("dev") / "w.duckdb"
    _invoke("ingest", str(DEV / "hotpotqa_dev50.jsonl"), "--db", str(db))
    files = {f.stem.removeprefix("hotpotqa__"): f for f in sorted(DEV.glob("predictions/*/*.jsonl"))}
    for method, f in files.items():
        _invoke("ingest", "--labels", str(f.parent), "--method", method, "--db", str(db))
    with open_readonly(db) as con:
        (run,) = con.execute("SELECT DISTINCT run_id FROM trajectories").fetchone()
    _invoke("judge", run, "--db", str(db))
    return db, run, files


def test_every_released_judge_scores_as_the_readme_table_and_the_raw_files(dev_db):
    db, run, files = dev_db
    reference = {r["total_index"]: r for r in map(json.loads, (DEV / "hotpotqa_dev50.jsonl").open())}
    table = {}
    for line in (DEV / "README.md").read_text().splitlines():
        cells = line.split()
        if len(cells) == 5 and cells[0].startswith("blind_"):
            table[cells[0]] = [float(c.rstrip("%")) for c in cells[1:4]]
    got = _by_method(db, run)
    assert len(files) == len(table) == 20
    for method, f in files.items():
        predicted = {p["index_in_dataset"]: {k: v for k, v in p["step_labels"].items() if v is not None}
                     for p in map(json.loads, f.open())}
        raw = [100 * x for x in _raw_scores(reference, predicted)]
        mine = [100 * m.value for m in (got[method].step_accuracy, got[method].exact,
                                        got[method].first_error_accuracy)]
        assert mine == pytest.approx(raw, abs=1e-9), method
        assert mine == pytest.approx(table[method], abs=0.01), method


def test_the_trivial_baselines_on_the_dev_split_from_the_raw_labels(dev_db):
    db, run, _ = dev_db
    reference = [json.loads(line) for line in (DEV / "hotpotqa_dev50.jsonl").open()]
    got = _by_method(db, run)
    all_fine = sum(_first_minus_one(r["step_labels"]) is None for r in reference) / len(reference)
    final_if_wrong = sum(_first_minus_one(r["step_labels"]) == (max(map(int, r["step_labels"]))
                                                                if r["final_label"] == -1 else None)
                         for r in reference) / len(reference)
    assert got["baseline:all_fine"].first_error_accuracy.value == pytest.approx(all_fine) == pytest.approx(0.62)
    assert got["baseline:final_if_wrong"].first_error_accuracy.value == pytest.approx(final_if_wrong)
    assert final_if_wrong == pytest.approx(0.82)


def test_the_failure_plane_page_shows_the_benchmarks_metrics(fixture_db, monkeypatch):
    from streamlit.testing.v1 import AppTest

    db, _ = fixture_db
    monkeypatch.setenv("TRAJSCOPE_DB", str(db))
    at = AppTest.from_file(str(Path(__file__).resolve().parents[1] / "app" / "page_scripts" / "failure_plane.py"),
                           default_timeout=60).run()
    assert not at.exception, [e.message for e in at.exception]
    table = next(d.value for d in at.dataframe if "first_error_accuracy" in d.value.columns)
    rows = dict(zip(table["method"], table["first_error_accuracy"], strict=True))
    assert rows["judgeX"].startswith("0.500 [") and rows["baseline:final_if_wrong"].startswith("0.500 [")


def test_replay_shows_people_and_each_method_side_by_side_at_the_step(fixture_db, monkeypatch):
    from streamlit.testing.v1 import AppTest

    db, run = fixture_db
    monkeypatch.setenv("TRAJSCOPE_DB", str(db))
    at = AppTest.from_file(str(Path(__file__).resolve().parents[1] / "app" / "page_scripts" / "replay.py"),
                           default_timeout=60)
    at.query_params.update({"trajectory": f"{run}::q2"})
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    table = next(d.value for d in at.dataframe if "first_error_named_by" in d.value.columns)
    # q2: people 1, -1, -1; judgeX's map names its first -1 at step 1 too; the rules name the wrong answer's
    # step (no observation shows the gold or the answer, no query repeats).
    assert table["people"].tolist() == ["correct", "error", "error"]
    named = dict(zip(table["step_index"], table["first_error_named_by"].fillna(""), strict=True))
    assert named == {0: "", 1: "judgeX", 2: "rules (rule answered_wrong)"}
