"""Rubric scanners validated against people: labels given to verdicts (agree / disagree) become the truth, and
`trajscope agreement --human RUN` gives precision, recall and kappa that equal an independent computation
(Wilson intervals from statsmodels, kappa from statsmodels), beside the always-match baseline."""
from __future__ import annotations

import re

import numpy as np
import pytest
from click.testing import CliRunner
from fixtures.forensics.builders import final, read, search, trajectory
from statsmodels.stats.inter_rater import cohens_kappa
from statsmodels.stats.proportion import proportion_confint

from trajscope.analysis.queries import ALWAYS_MATCH, rubric_agreement
from trajscope.cli import main as cli
from trajscope.engine.llm import resolve_model
from trajscope.engine.mock_llm import MockLLMServer, reply_json
from trajscope.engine.scanners import scan
from trajscope.format import Run
from trajscope.warehouse import ingest_trajectories, open_read
from trajscope.warehouse.verdicts import label_verdict

RUBRIC = "The agent read a gold passage and still answered wrong."
N = 20


@pytest.fixture(scope="module")
def labelled(tmp_path_factory):
    """20 trajectories; the model says match on 0-9; people agree on 0-6 and 10-17, disagree on 7-9 and
    18-19, say unsure on none but 5's verdict is unsure (left out)."""
    db = tmp_path_factory.mktemp("agree") / "wh.duckdb"
    run = Run(run_id="r", dataset="fx", condition="r")
    ingest_trajectories(db, [trajectory(run, f"q{i:02d}", f"Where was P{i} born?", f"C{i}",
                                        [search((f"g{i}", "bio")), read((f"g{i}", f"P{i} was born in C{i}.")),
                                         final(f"A{i}")], gold_chunks=(f"g{i}",)) for i in range(N)])

    def respond(request):
        i = int(re.search(r"Where was P(\d+) born", request.text()).group(1))
        verdict = "unsure" if i == 5 else "match" if i < 10 else "no_match"
        return reply_json({"verdict": verdict, "explanation": "x", "cited_steps": ["1"]})

    with MockLLMServer(respond) as server:
        report = scan(db, RUBRIC, ["r"], config=resolve_model(server.model_spec))
    ids = {v.trajectory_id: v.verdict_id for v in report.verdicts}
    labels = {}
    for i in range(N):
        labels[i] = "disagree" if i in (7, 8, 9, 18, 19) else "agree"
        label_verdict(db, ids[f"r::q{i:02d}"], labels[i], None)
    label_verdict(db, ids["r::q03"], "unsure", "changed my mind")  # the latest label counts: q03 left out
    labels[3] = "unsure"
    return db, labels


def _expected(labels):
    said, truth = [], []
    for i, label in labels.items():
        if i == 5 or label == "unsure":
            continue
        match = i < 10
        said.append(match)
        truth.append(match if label == "agree" else not match)
    return np.array(said), np.array(truth)


def _kappa(said, truth):
    table = np.array([[np.sum((truth == a) & (said == b)) for b in (False, True)] for a in (False, True)])
    return cohens_kappa(table).kappa


def test_precision_recall_and_kappa_equal_an_independent_computation(labelled):
    db, labels = labelled
    said, truth = _expected(labels)
    with open_read(db) as con:
        rows = {r.scanner: r for r in rubric_agreement(con, "r").rows}
    model = rows["mock"]
    tp = int(np.sum(said & truth))
    assert model.n == len(said) == 18  # 20 less the unsure verdict (q05) and the unsure label (q03)
    assert model.precision.value == pytest.approx(tp / said.sum())
    assert (model.precision.low, model.precision.high) == pytest.approx(
        proportion_confint(tp, int(said.sum()), method="wilson"))
    assert model.recall.value == pytest.approx(tp / truth.sum())
    assert (model.recall.low, model.recall.high) == pytest.approx(
        proportion_confint(tp, int(truth.sum()), method="wilson"))
    assert model.kappa.value == pytest.approx(_kappa(said, truth)) and model.kappa.ci == "bootstrap"
    assert model.kappa.low <= model.kappa.value <= model.kappa.high
    baseline = rows[ALWAYS_MATCH]
    assert baseline.precision.value == pytest.approx(truth.mean()) and baseline.recall.value == 1.0
    assert baseline.kappa.value == pytest.approx(0.0)


def test_agreement_human_prints_the_rubric_table_without_step_labels(labelled):
    db, labels = labelled
    said, truth = _expected(labels)
    result = CliRunner().invoke(cli, ["agreement", "--human", "r", "--db", str(db)])
    assert result.exit_code == 0, result.output
    assert "Rubric scanners against people's labels" in result.output
    assert "Agreement with people's first errors" not in result.output  # no step labels in this run
    row = next(ln for ln in result.output.splitlines() if "| mock " in ln)
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[2] == "18" and cells[3].startswith(f"{np.sum(said & truth) / said.sum():.3f} [")
