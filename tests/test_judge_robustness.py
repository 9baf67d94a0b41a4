"""Read-Gate Table 18: a second judge on a stratified sample, its accuracy reweighted to each run's strata."""
from __future__ import annotations

import pytest
from click.testing import CliRunner
from fixtures.forensics.builders import final, search, trajectory
from sklearn.metrics import cohen_kappa_score

from trajscope.analysis.queries import judge_robustness
from trajscope.cli import main
from trajscope.format import Judgment, Run
from trajscope.warehouse import ingest_trajectories, open_warehouse

A_RIGHT = set(range(12))  # judge A: 12 of 20 right
SAMPLE_B = {0: True, 1: True, 2: True, 3: False, 12: True, 13: False, 14: False, 15: False}  # 4 per stratum


def test_reweighted_difference_and_kappa_on_the_sample(tmp_path):
    run = Run(run_id="r", dataset="hotpotqa", condition="baseline")
    records = []
    for i in range(20):
        verdicts = [Judgment(judge="llm", score=float(i in A_RIGHT), judge_model="A")]
        if i in SAMPLE_B:
            verdicts.append(Judgment(judge="llm", score=float(SAMPLE_B[i]), judge_model="B"))
        records.append(trajectory(run, f"q{i:02d}", f"Question {i}?", "x", [search(("c", "s")), final("x")],
                                  judgments=tuple(verdicts)))
    path = tmp_path / "wh.duckdb"
    ingest_trajectories(path, records)
    with open_warehouse(path) as con:
        table = judge_robustness(con, "llm:A", "llm:B")
    (row,) = table.runs
    # By hand: w_right = 12/20 with B right on 3/4 sampled; w_wrong = 8/20 with B right on 1/4.
    assert (row.n_population, row.n_sample, row.accuracy_a) == (20, 8, pytest.approx(0.6))
    assert row.accuracy_b_reweighted == pytest.approx(12 / 20 * 3 / 4 + 8 / 20 * 1 / 4)
    assert row.difference == pytest.approx(-0.05)
    a = [i in A_RIGHT for i in sorted(SAMPLE_B)]
    b = [SAMPLE_B[i] for i in sorted(SAMPLE_B)]
    assert table.agreement.agreement.n == 8
    assert table.agreement.agreement.kappa == pytest.approx(cohen_kappa_score(a, b))
    assert row.kappa == pytest.approx(cohen_kappa_score(a, b))
    # One run: the overall row (runs weighted by their N) is that run's estimate.
    overall = table.overall
    assert (overall.n_population, overall.n_sample) == (20, 8)
    assert overall.difference == pytest.approx(-0.05) and overall.kappa == pytest.approx(cohen_kappa_score(a, b))
    out = CliRunner().invoke(main, ["agreement", "r", "--robustness", "llm:A", "llm:B", "--db", str(path)])
    assert out.exit_code == 0, out.output
    line = next(x for x in out.output.splitlines() if x.startswith("| r "))
    assert "0.550" in line and "-0.050" in line


def test_a_stratum_without_a_sampled_item_gives_no_estimate(tmp_path):
    run = Run(run_id="r", dataset="hotpotqa", condition="baseline")
    records = [trajectory(run, f"q{i}", f"Question {i}?", "x", [final("x")], judgments=tuple(
        [Judgment(judge="llm", score=float(i < 2), judge_model="A")]
        + ([Judgment(judge="llm", score=1.0, judge_model="B")] if i == 0 else []))) for i in range(4)]
    path = tmp_path / "wh.duckdb"
    ingest_trajectories(path, records)
    with open_warehouse(path) as con:
        (row,) = judge_robustness(con, "llm:A", "llm:B").runs
    assert row.accuracy_b_reweighted is None and row.difference is None and row.n_sample == 1
