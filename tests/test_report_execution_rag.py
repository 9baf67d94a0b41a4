"""`trajscope report execution-rag`: every cell recomputed from the fixture records in plain Python."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest
from click.testing import CliRunner
from fixtures.report.execution_rag import QWEN, RUNS, build, run_id

from trajscope.analysis.report import build_report, report_figures
from trajscope.cli import main
from trajscope.engine.judge_pass import judge_run
from trajscope.engine.judges import is_abstention
from trajscope.format import ReadStep, SearchStep
from trajscope.warehouse import ingest_trajectories, open_readonly

TOL = 1e-9
IDS = [run_id(*s[:4]) for s in RUNS]
NAMES = {
    "arag": "A-RAG",
    "register": "ExecutionRAG",
    "question_only_init": "w/o seed grounding (question-only register)",
    "no_updates": "w/o iterative updates (register built once)",
}


@pytest.fixture(scope="module")
def fixture(tmp_path_factory):
    records = build()
    path = tmp_path_factory.mktemp("erag") / "wh.duckdb"
    ingest_trajectories(path, records)
    for rid in IDS:
        judge_run(path, rid, extractors=("regex",))
    with open_readonly(path) as con:
        tables = {t.name: t for t in build_report(con, "execution-rag", IDS, db_path=path)}
    return path, records, tables


def _facts(t):
    scores = {j.judge: j.score for j in t.judgments}
    reads = [p for s in t.steps if isinstance(s, ReadStep) for p in s.passages]
    snippets = [c for s in t.steps if isinstance(s, SearchStep) for c in s.candidates]
    reached = {p.chunk_id for p in reads} | {c.chunk_id for c in snippets}
    golds = set(t.question.gold_chunk_ids)
    label = None
    if scores["llm"] < 0.5:
        if scores["contain"] >= 0.5:
            label = "judge_error"
        elif is_abstention(t.final_answer):
            label = "gave_up"
        elif golds <= reached:
            label = "reasoning_error"
        else:
            label = "missing_evidence"
    tokens = (sum(len(p.text) for p in reads if p.is_new is not False) + sum(len(c.snippet) for c in snippets)) / 4
    return {
        "contain": scores["contain"],
        "llm": scores["llm"],
        "label": label,
        "tokens": tokens,
        "cost": t.total_cost_usd,
        "hop": t.question.hop_count,
        "run": t.run.run_id,
    }


def _by_run(records):
    out = defaultdict(list)
    for t in records:
        out[t.run.run_id].append(_facts(t))
    return out


def _label(spec, with_embedding=True):
    name = NAMES["arag" if spec[1] == "arag" else spec[2]]
    return name + (f" ({QWEN})" if spec[3] and with_embedding else "")


def _rows(table):
    return [dict(zip([c.key for c in table.columns], row, strict=False)) for row in table.rows]


def test_main_results_and_efficiency_cells(fixture):
    _, records, tables = fixture
    facts = _by_run(records)
    main = {r["method"]: r for r in _rows(tables["er_t1"])}
    eff = {r["method"]: r for r in _rows(tables["er_t9"])}
    for spec in RUNS:
        f = facts[run_id(*spec[:4])]
        label, dataset = _label(spec), spec[0]
        assert main[label][f"{dataset}_contain"] == pytest.approx(100 * np.mean([x["contain"] for x in f]), abs=TOL)
        assert main[label][f"{dataset}_llm"] == pytest.approx(100 * np.mean([x["llm"] for x in f]), abs=TOL)
        assert eff[label][f"{dataset}_tokens"] == round(np.mean([x["tokens"] for x in f]))
        assert eff[label][f"{dataset}_cost"] == pytest.approx(np.mean([x["cost"] for x in f]), abs=TOL)
    assert main["w/o seed grounding (question-only register)"]["2wiki_llm"] is None


def test_ablation_cells_use_one_backbone(fixture):
    _, records, tables = fixture
    facts = _by_run(records)
    rows = _rows(tables["er_t2"])
    assert [(r["dataset"], r["variant"]) for r in rows] == [
        ("musique", NAMES["register"]),
        ("musique", NAMES["question_only_init"]),
        ("musique", NAMES["no_updates"]),
        ("2wiki", NAMES["register"]),
    ]
    for row in rows:
        condition = {v: k for k, v in NAMES.items()}[row["variant"]]
        f = facts[run_id(row["dataset"], "execution_rag", condition, None)]
        assert row["llm"] == pytest.approx(100 * np.mean([x["llm"] for x in f]), abs=TOL)
        assert row["contain"] == pytest.approx(100 * np.mean([x["contain"] for x in f]), abs=TOL)
    for row in _rows(tables["er_t10"]):
        condition = {v: k for k, v in NAMES.items()}[row["variant"]]
        f = facts[run_id(row["dataset"], "execution_rag", condition, None)]
        assert row["tokens"] == round(np.mean([x["tokens"] for x in f]))
        assert row["cost"] == pytest.approx(np.mean([x["cost"] for x in f]), abs=TOL)


def test_per_category_cells(fixture):
    _, records, tables = fixture
    by = defaultdict(list)
    for t in records:
        if t.run.condition == "register":
            key = "musique" if t.run.dataset == "musique" else "2wiki"
            category = f"{t.question.hop_count}-hop" if key == "musique" else t.question.question_type
            by[(t.run.run_id, category)].append(_facts(t))
    for name, rid in (
        ("er_t3", run_id("musique", "execution_rag", "register", None)),
        ("er_t6", run_id("musique", "execution_rag", "register", QWEN)),
        ("er_t5", run_id("2wiki", "execution_rag", "register", None)),
    ):
        rows = _rows(tables[name])
        assert sum(r["n"] for r in rows) == 30
        for row in rows:
            f = by[(rid, row["category"])]
            assert row["n"] == len(f)
            assert row["contain"] == pytest.approx(100 * np.mean([x["contain"] for x in f]), abs=TOL)
            assert row["llm"] == pytest.approx(100 * np.mean([x["llm"] for x in f]), abs=TOL)


def test_failure_tables_cells(fixture):
    _, records, tables = fixture
    facts = _by_run(records)
    labels = {
        "Judge Error": "judge_error",
        "Gave Up": "gave_up",
        "Reasoning Error": "reasoning_error",
        "Missing Evidence": "missing_evidence",
    }
    for name, embedding in (("er_t12", None), ("er_t14", QWEN)):
        rows = {r["category"]: r for r in _rows(tables[name])}
        for spec in RUNS:
            if spec[0] != "musique" or spec[3] != embedding:
                continue
            f = [x for x in facts[run_id(*spec[:4])] if x["label"]]
            method = _label(spec, with_embedding=False)
            assert rows["Total"][f"{method}_n"] == len(f)
            for text, label in labels.items():
                count = sum(x["label"] == label for x in f)
                assert rows[text][f"{method}_n"] == count
                assert rows[text][f"{method}_pct"] == pytest.approx(100 * count / len(f), abs=TOL)
    hops = {(r["hop"], r["method"]): r for r in _rows(tables["er_t13"])}
    for spec in RUNS:
        if spec[0] != "musique" or spec[3] is not None:
            continue
        method = _label(spec, with_embedding=False)
        for hop in (2, 3, 4):
            f = [x for x in facts[run_id(*spec[:4])] if x["label"] and x["hop"] == hop]
            row = hops[(str(hop), method)]
            assert row["n"] == len(f)
            for label in labels.values():
                assert row[label] == pytest.approx(100 * sum(x["label"] == label for x in f) / len(f), abs=TOL)


def test_pareto_frontier_and_figure(fixture, tmp_path):
    path, records, tables = fixture
    facts = _by_run(records)
    rows = _rows(tables["er_pareto"])
    for dataset in ("musique", "2wiki"):
        points = [
            (
                _label(s),
                np.mean([x["tokens"] for x in facts[run_id(*s[:4])]]),
                100 * np.mean([x["llm"] for x in facts[run_id(*s[:4])]]),
            )
            for s in RUNS
            if s[0] == dataset
        ]
        for label, tokens, acc in points:
            dominated = any(t <= tokens and a >= acc and (t < tokens or a > acc) for _, t, a in points)
            (row,) = [
                r
                for r in rows
                if r["dataset"] == dataset and r["method"] + (f" ({QWEN})" if r["embedding"] == QWEN else "") == label
            ]
            assert row["accuracy"] == pytest.approx(acc, abs=TOL)
            assert row["frontier"] == ("no" if dominated else "yes")
    figures = {f.name: f for f in report_figures(list(tables.values()))}
    assert {"er_pareto", "er_fig2", "er_fig5"} <= set(figures)  # Figures 2 and 5 are drawn beside Figure 4
    figure = figures["er_pareto"]
    assert figure.spec["data"]["values"][0]["method"] == rows[0]["method"]
    out = tmp_path / "out"
    result = CliRunner().invoke(
        main, ["report", "execution-rag", *IDS, "--format", "markdown", "--out", str(out), "--db", str(path)]
    )
    assert result.exit_code == 0, result.output
    assert (out / "er_pareto.svg").read_text().startswith("<svg")
    assert (out / "er_pareto.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (out / "er_fig2.svg").read_text().startswith("<svg") and (out / "er_fig5.svg").exists()


def test_without_execution_rag_runs_tables_say_why(fixture):
    path, _, _ = fixture
    with open_readonly(path) as con:
        tables = {t.name: t for t in build_report(con, "execution-rag", [run_id("2wiki", "arag", "baseline", None)])}
    assert "no ExecutionRAG 'register' run" in tables["er_t3"].not_applicable
    assert tables["er_t2"].not_applicable and tables["er_t11"].not_applicable
    assert not tables["er_t1"].not_applicable
