"""Agreement with people: label families load onto the right steps, and `trajscope agreement --human` gives
each method's and baseline's numbers, recomputed here independently (from the raw real logs where they exist),
with Wilson intervals checked against statsmodels and Cohen's kappa against statsmodels."""
from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import duckdb
import numpy as np
import pytest
from click.testing import CliRunner
from scipy import stats
from statsmodels.stats.inter_rater import cohens_kappa
from statsmodels.stats.proportion import proportion_confint

from trajscope.analysis.queries import human_agreement, poisson_binomial_range
from trajscope.cli import main as cli
from trajscope.warehouse import open_readonly

LABELS = Path("tests/fixtures/labels")
LOGS = Path("../shared/data/external_logs")
WHO = LOGS / "who_and_when" / "algorithm_generated"
TRAIL = LOGS / "trail_swe"
real = pytest.mark.skipif(not LOGS.is_dir(), reason="real logs ../shared/data/external_logs are not present")


def _ingest(db: Path, *args: str) -> str:
    result = CliRunner().invoke(cli, ["ingest", *args, "--db", str(db)])
    assert result.exit_code == 0, result.output
    return result.output


def _human_table(db: Path, run: str, *extra: str) -> dict[str, dict[str, str]]:
    result = CliRunner().invoke(cli, ["agreement", "--human", run, *extra, "--db", str(db)])
    assert result.exit_code == 0, result.output
    header = ["method", "n", "coverage", "step_accuracy", "within_1", "within_3", "agent_accuracy", "category_kappa",
              "vs_rules_mcnemar"]
    # The rows of the decisive-step table only (the published-metrics table above it has other columns).
    lines, inside = [], False
    for ln in result.output.splitlines():
        if ln.startswith("| method"):
            inside = [c.strip() for c in ln.strip("|").split("|")] == header
        elif ln.startswith("| ") and inside:
            lines.append(ln)
    return {cells[0]: dict(zip(header, cells, strict=True))
            for cells in ([c.strip() for c in ln.strip("|").split("|")] for ln in lines)}


def _value(cell: str) -> tuple[float, float, float]:
    m = re.fullmatch(r"([\d.]+) \[([\d.]+), ([\d.]+)\]", cell)
    assert m, cell
    return float(m.group(1)), float(m.group(2)), float(m.group(3))


def _wilson(hits: int, n: int) -> tuple[float, float]:
    return proportion_confint(hits, n, alpha=0.05, method="wilson")


def test_per_step_judgments_over_a_chat_log_give_the_first_minus_one_as_the_first_error(tmp_path):
    db = tmp_path / "w.duckdb"
    out = _ingest(db, str(LABELS / "prm_chat.jsonl"), "--labels", str(LABELS / "prm_step_labels.jsonl"))
    assert "6 label(s) on 2 trajectory(ies)" in out
    with open_readonly(db) as con:
        rows = con.execute("SELECT t.question_id, h.step_index, h.source_ref, h.label FROM human_step_labels h "
                           "JOIN trajectories t USING (trajectory_id) ORDER BY 1, 2").fetchall()
        first = con.execute("SELECT t.question_id, f.step_index, f.source_ref FROM human_first_error f "
                            "JOIN trajectories t USING (trajectory_id) ORDER BY 1").fetchall()
    # p1's assistant turns are messages 1, 3, 5 (steps 0, 1, 2); p2's map is a list in step order.
    assert rows == [("p1", 0, "message:1", "correct"), ("p1", 1, "message:3", "error"), ("p1", 2, "message:5", "error"),
                    ("p2", 0, "message:1", "correct"), ("p2", 1, "message:3", "neutral"),
                    ("p2", 2, "message:5", "error")]
    assert first == [("p1", 1, "message:3"), ("p2", 2, "message:5")]


def test_a_stored_method_is_scored_with_wilson_intervals_and_kappa(tmp_path):
    db = tmp_path / "w.duckdb"
    _ingest(db, str(LABELS / "prm_chat.jsonl"))
    labels = tmp_path / "labels.jsonl"
    labels.write_text("\n".join(json.dumps(r) for r in [
        {"id": "p1", "step_index": 1, "category": "wrong entity"},
        {"id": "p2", "source_ref": "message:5", "category": "arithmetic"}]) + "\n")
    _ingest(db, "--labels", str(labels))
    run = "openai_chat:prm_chat.jsonl"
    with duckdb.connect(str(db)) as con:
        tids = dict(con.execute("SELECT question_id, trajectory_id FROM trajectories").fetchall())
        con.executemany("INSERT INTO step_attribution_rows VALUES ('mine', ?, ?, NULL, NULL, ?, 'because')",
                        [[tids["p1"], 1, "wrong entity"], [tids["p2"], 0, "wrong entity"]])
    with open_readonly(db) as con:
        result = {m.method: m for m in human_agreement(con, run).methods}
    mine = result["mine"]
    assert mine.step.value == 0.5 and (mine.step.low, mine.step.high) == pytest.approx(_wilson(1, 2))
    assert mine.within1.value == 0.5 and mine.within3.value == 1.0  # p2: step 0 is 2 steps from step 2
    human, theirs = ["wrong entity", "arithmetic"], ["wrong entity", "wrong entity"]
    table = np.array([[sum(h == a and t == b for h, t in zip(human, theirs, strict=True)) for b in sorted(set(human))]
                      for a in sorted(set(human))])
    assert mine.category.value == pytest.approx(cohens_kappa(table).kappa) and mine.category.ci == "bootstrap"
    assert mine.agent.value is None and "human labels name no agent" in mine.agent.reason
    # Always the final step hits both (steps 2 and 2 against first errors 1 and 2: one exact).
    assert result["baseline:final_step"].step.value == 0.5 and result["baseline:first_step"].step.value == 0.0
    assert result["baseline:uniform_random"].step.value == pytest.approx(1 / 3)
    # The log has a gold answer and no gold passages: the answer-evidence rules apply (scored at import, no judge
    # pass). Both answers are wrong and both rules name the final step 2: p2's first error, not p1's (step 1).
    assert result["rules"].step.value == 0.5 and result["rules"].coverage == 1.0


def test_a_method_is_paired_against_the_rules_by_mcnemar_on_finding_the_humans_step(tmp_path):
    from funnel_records import CHUNKS, DATASET, cases
    from statsmodels.stats.contingency_tables import mcnemar

    from trajscope.warehouse import ingest_trajectories, load_chunks

    db = tmp_path / "w.duckdb"
    records = {n: t for n, (t, *_) in cases().items() if t.run.run_id == "funnel"}
    ingest_trajectories(db, list(records.values()))
    load_chunks(db, CHUNKS, DATASET)
    rules = {n: step for n, (_, rule, step, _) in cases().items() if n in records and rule}
    # People's first errors: the rules' step on four trajectories, another step on the rest.
    human = {n: step if k < 4 else step - 1 if step else 1 for k, (n, step) in enumerate(sorted(rules.items()))}
    # "mine" names the people's step on the last three, the rules' step on two of the first four, step 0 elsewhere.
    names = sorted(rules)
    mine = {n: human[n] if k >= len(names) - 3 else rules[n] if k in (0, 1) else 0 for k, n in enumerate(names)}
    with duckdb.connect(str(db)) as con:
        con.executemany("INSERT INTO human_step_labels (trajectory_id, ordinal, step_index, label, origin) "
                        "VALUES (?, 0, ?, 'error', 'fixture')",
                        [[records[n].trajectory_id, s] for n, s in human.items()])
        con.executemany("INSERT INTO step_attribution_rows VALUES ('mine', ?, ?, NULL, NULL, NULL, 'fixture')",
                        [[records[n].trajectory_id, s] for n, s in mine.items()])
    with open_readonly(db) as con:
        result = {m.method: m for m in human_agreement(con, "funnel").methods}
    assert result["rules"].step.value == pytest.approx(4 / len(names))
    rules_hit = [rules[n] == human[n] for n in names]
    mine_hit = [mine[n] == human[n] for n in names]
    table = [[sum(r and m for r, m in zip(rules_hit, mine_hit, strict=True)),
              sum(r and not m for r, m in zip(rules_hit, mine_hit, strict=True))],
             [sum(m and not r for r, m in zip(rules_hit, mine_hit, strict=True)),
              sum(not r and not m for r, m in zip(rules_hit, mine_hit, strict=True))]]
    paired = result["mine"].vs_rules
    assert (paired.a_only, paired.b_only) == (table[0][1], table[1][0]) == (2, 3)
    assert paired.exact_p == pytest.approx(mcnemar(table, exact=True).pvalue)
    assert paired.chi2_p == pytest.approx(mcnemar(table, exact=False, correction=True).pvalue)
    assert result["baseline:first_step"].vs_rules is not None  # a baseline is paired the same way
    assert "expected hits" in result["baseline:uniform_random"].vs_rules_reason
    assert result["rules"].vs_rules is None and result["rules"].vs_rules_reason is None


def test_the_uniform_baseline_interval_is_the_exact_poisson_binomial_range():
    # Equal probabilities: the Poisson binomial is a binomial, whose quantiles scipy gives.
    low, high = poisson_binomial_range(np.full(40, 0.1))
    assert (low, high) == (stats.binom.ppf(0.025, 40, 0.1) / 40, stats.binom.ppf(0.975, 40, 0.1) / 40)
    rng = np.random.default_rng(0)
    p = rng.uniform(0.05, 0.5, 60)
    draws = (rng.random((200_000, 60)) < p).mean(axis=1)
    assert poisson_binomial_range(p) == pytest.approx(
        (np.quantile(draws, 0.025), np.quantile(draws, 0.975)), abs=1 / 60 + 1e-9)


# --- real logs: every number recomputed from the raw files ---------------------------------------------------

def _walk(span: dict):
    yield span
    for child in span.get("child_spans", []):
        yield from _walk(child)


@pytest.fixture(scope="module")
def real_db(tmp_path_factory) -> Path:
    db = tmp_path_factory.mktemp("agreement") / "w.duckdb"
    _ingest(db, str(WHO), str(TRAIL / "traces"), "--labels", str(TRAIL / "annotations"))
    return db


def _check(table: dict, method: str, column: str, hits: float, n: int, exact_uniform: bool = False) -> None:
    value, low, high = _value(table[method][column])
    assert value == pytest.approx(hits / n, abs=5e-4)
    if not exact_uniform:
        assert (low, high) == pytest.approx(_wilson(round(hits), n), abs=5e-4)


@real
def test_who_and_when_agreement_and_baselines_from_the_raw_files(real_db):
    raw = [json.loads(p.read_text()) for p in WHO.glob("*.json")]
    n = len(raw)
    gold = [int(r["mistake_step"]) for r in raw]
    length = [len(r["history"]) for r in raw]
    table = _human_table(real_db, "who_and_when:algorithm_generated")
    assert table["baseline:first_step"]["n"] == "126"
    _check(table, "baseline:first_step", "step_accuracy", sum(g == 0 for g in gold), n)
    _check(table, "baseline:first_step", "within_1", sum(g <= 1 for g in gold), n)
    _check(table, "baseline:first_step", "within_3", sum(g <= 3 for g in gold), n)
    _check(table, "baseline:final_step", "step_accuracy", sum(g == k - 1 for g, k in zip(gold, length, strict=True)), n)
    _check(table, "baseline:final_step", "within_3", sum(k - 1 - g <= 3 for g, k in zip(gold, length, strict=True)), n)
    agents = [r["mistake_agent"] for r in raw]
    _check(table, "baseline:first_step", "agent_accuracy",
           sum(r["history"][0]["name"] == a for r, a in zip(raw, agents, strict=True)), n)
    _check(table, "baseline:final_step", "agent_accuracy",
           sum(r["history"][-1]["name"] == a for r, a in zip(raw, agents, strict=True)), n)

    def most_frequent(history: list[dict]) -> str:
        counts = Counter(h["name"] for h in history)
        return max(counts, key=lambda name: (counts[name], -[h["name"] for h in history].index(name)))
    _check(table, "baseline:most_frequent_agent", "agent_accuracy",
           sum(most_frequent(r["history"]) == a for r, a in zip(raw, agents, strict=True)), n)
    assert table["baseline:most_frequent_agent"]["step_accuracy"].startswith("does not apply")
    # Uniform random: expected hits sum of 1/n_i (and the window share), exactly; its interval is a range.
    expected = {"step_accuracy": sum(1 / k for k in length),
                "within_1": sum((min(g + 1, k - 1) - max(g - 1, 0) + 1) / k for g, k in zip(gold, length, strict=True)),
                "within_3": sum((min(g + 3, k - 1) - max(g - 3, 0) + 1) / k for g, k in zip(gold, length, strict=True)),
                "agent_accuracy": sum((a.lower() in {h["name"].lower() for h in r["history"]})
                                      / len({h["name"].lower() for h in r["history"]})
                                      for r, a in zip(raw, agents, strict=True))}
    for column, hits in expected.items():
        _check(table, "baseline:uniform_random", column, hits, n, exact_uniform=True)
        _, low, high = _value(table["baseline:uniform_random"][column])
        assert low <= hits / n <= high
    # trajscope's rules need gold passages, which this log has none of: a reason, never a number.
    for column in ("step_accuracy", "within_1", "within_3"):
        assert table["rules"][column].startswith("does not apply: the rules need gold passages")
    assert table["rules"]["agent_accuracy"].startswith("does not apply")


@real
def test_trail_agreement_and_baselines_from_the_raw_files(real_db):
    first, length = [], []
    for path in sorted((TRAIL / "traces").glob("*.json")):
        doc = json.loads(path.read_text())
        spans = {s["span_id"]: s for root in doc["spans"] for s in _walk(root)}
        # Steps: the LLM and tool spans in time order (each once).
        steps = sorted((s for s in spans.values() if s["span_attributes"].get("openinference.span.kind")
                        in ("LLM", "TOOL")), key=lambda s: s["timestamp"])
        index = {s["span_id"]: i for i, s in enumerate(steps)}
        errors = json.loads((TRAIL / "annotations" / path.name).read_text())["errors"]
        if errors:
            first.append(min(index[e["location"]] for e in errors))
            length.append(len(steps))
    n = len(first)
    assert n == 5
    table = _human_table(real_db, "trail:traces", "--method", "rules")
    _check(table, "baseline:first_step", "step_accuracy", sum(g == 0 for g in first), n)
    _check(table, "baseline:first_step", "within_1", sum(g <= 1 for g in first), n)
    _check(table, "baseline:final_step", "within_3", sum(k - 1 - g <= 3 for g, k in zip(first, length, strict=True)), n)
    _check(table, "baseline:uniform_random", "step_accuracy", sum(1 / k for k in length), n, exact_uniform=True)
    assert table["rules"]["step_accuracy"].startswith("does not apply: the rules need gold passages")
    assert table["baseline:first_step"]["agent_accuracy"] == "does not apply: the human labels name no agent"
    assert table["baseline:first_step"]["category_kappa"] == "does not apply: the method names no category"


def test_the_failure_plane_page_shows_agreement_with_people(tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest

    db = tmp_path / "w.duckdb"
    _ingest(db, str(LABELS / "prm_chat.jsonl"), "--labels", str(LABELS / "prm_step_labels.jsonl"))
    monkeypatch.setenv("TRAJSCOPE_DB", str(db))
    at = AppTest.from_file(str(Path(__file__).resolve().parents[1] / "app" / "page_scripts" / "failure_plane.py"),
                           default_timeout=60).run()
    assert not at.exception, [e.message for e in at.exception]
    assert "Agreement with people: the first error" in [h.value for h in at.subheader]
    table = next(d.value for d in at.dataframe if "step_accuracy" in d.value.columns)
    rows = dict(zip(table["method"], table["step_accuracy"], strict=True))
    # First errors at steps 1 and 2 of 3-step trajectories: always the final step hits one of two.
    assert rows["baseline:final_step"].startswith("0.500 [") and rows["baseline:first_step"].startswith("0.000 [")
    # The log has a gold answer and no gold passages: the answer-evidence rules name the final step of both
    # wrong answers (scored at import), which is p2's first error.
    assert rows["rules"].startswith("0.500 [")
