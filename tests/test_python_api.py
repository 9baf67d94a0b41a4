"""The notebook API: docs/python-api.md's example runs and gives the CLI's numbers for the same questions."""
from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from click.testing import CliRunner
from fixtures.forensics.builders import final, read, search, trajectory

import trajscope
from trajscope.api import CompareResult, FunnelResult, PaperReport, Replay, UnknownView
from trajscope.cli import main
from trajscope.format import Judgment, Run, encode
from trajscope.warehouse import ForbiddenStatement

DOC = Path(__file__).resolve().parents[1] / "docs" / "python-api.md"
N_QUESTIONS = 30


@dataclass
class Outcome:
    """What the generator decided for one trajectory: the facts the expected numbers are counted from."""

    right: bool
    read: bool
    question_type: str


def _write_run(path: Path, run_id: str, seed: int, p_right: float, p_read: float) -> list[Outcome]:
    """A canonical log of N_QUESTIONS one-hop questions, each judged (EM and Contain-Acc) as the generator chose."""
    rng = np.random.default_rng(seed)
    run = Run(run_id=run_id, dataset="hotpotqa", condition=run_id)
    outcomes = []
    with path.open("wb") as log:
        for i in range(N_QUESTIONS):
            gold = (f"c{i}", f"Person {i} was born in City{i}.")
            did_read = bool(rng.random() < p_read)
            right = bool(rng.random() < p_right)
            steps = [search(gold), *([read(gold)] if did_read else []), final(f"City{i}" if right else f"Town{i}")]
            kind = "bridge" if i % 3 else "comparison"
            verdicts = (Judgment(judge="em", score=float(right)), Judgment(judge="contain", score=float(right)))
            log.write(encode(trajectory(run, f"q{i:03d}", f"Where was Person {i} born?", f"City{i}", steps,
                                        gold_chunks=(gold[0],), question_type=kind, judgments=verdicts)) + b"\n")
            outcomes.append(Outcome(right, did_read, kind))
    return outcomes


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, object], dict[str, list[Outcome]]]:
    """docs/python-api.md's example run in a folder holding its two logs; its variables and the generator's facts."""
    folder = tmp_path_factory.mktemp("python_api")
    (folder / "runs").mkdir()
    facts = {"baseline": _write_run(folder / "runs" / "baseline.jsonl", "baseline", 1, 0.45, 0.4),
             "gate": _write_run(folder / "runs" / "gate.jsonl", "gate", 2, 0.65, 1.0)}
    code = re.search(r"```python\n(.*?)```", DOC.read_text(), re.S)
    assert code, f"{DOC}: no python example"
    namespace: dict[str, object] = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)
        exec(compile(code.group(1), str(DOC), "exec"), namespace)  # noqa: S102 - the documented example itself
    return folder, namespace, facts


def _cli_csv(*args: str) -> list[dict[str, str]]:
    result = CliRunner().invoke(main, [*args, "--format", "csv"])
    assert result.exit_code == 0, result.output
    return list(csv.DictReader(io.StringIO(result.stdout)))


def _same(frame: pl.DataFrame, rows: list[dict[str, str]], columns: list[str]) -> None:
    """Each CLI cell (CSV text) equals the frame's value: numbers to 1e-12, the rest as text."""
    assert frame.height == len(rows)
    for mine, theirs in zip(frame.iter_rows(named=True), rows, strict=True):
        for column in columns:
            value, text = mine[column], theirs[column]
            if isinstance(value, float):
                assert value == pytest.approx(float(text), abs=1e-12), column
            else:
                assert str(value) == text, column


def test_the_run_summary_is_the_clis_and_the_logs(example):
    folder, names, facts = example
    summary = names["summary"]
    assert isinstance(summary, pl.DataFrame)
    db = str(folder / "study.duckdb")
    cli = _cli_csv("sql", "SELECT run_id, n_trajectories, em, contain_acc FROM run_summary "
                          "WHERE run_id IN ('baseline', 'gate') ORDER BY run_id", "--db", db)
    _same(summary, cli, ["run_id", "n_trajectories", "em", "contain_acc"])
    for row in summary.iter_rows(named=True):
        outcomes = facts[row["run_id"]]
        assert row["n_trajectories"] == N_QUESTIONS
        assert row["contain_acc"] == pytest.approx(sum(o.right for o in outcomes) / N_QUESTIONS)


def test_the_failure_plane_is_the_clis_and_the_logs(example):
    folder, names, facts = example
    plane = names["plane"]
    assert isinstance(plane, pl.DataFrame)
    cli = _cli_csv("sql", "SELECT run_id, n_wrong, n_disc, n_post, p_disc, p_post FROM failure_plane "
                          "WHERE extractor = 'regex' ORDER BY run_id", "--db", str(folder / "study.duckdb"))
    _same(plane, cli, ["run_id", "n_wrong", "n_disc", "n_post", "p_disc", "p_post"])
    for row in plane.iter_rows(named=True):
        outcomes = facts[row["run_id"]]
        # Read-Gate: wrong without reading is a discipline failure; wrong after reading the gold, post-gold-read.
        disc = sum(not o.right and not o.read for o in outcomes)
        post = sum(not o.right and o.read for o in outcomes)
        assert (row["n_disc"], row["n_post"]) == (disc, post)
        assert row["p_disc"] == pytest.approx(disc / N_QUESTIONS)


def test_the_paired_comparison_is_the_clis_and_the_logs(example):
    folder, names, facts = example
    comparison = names["comparison"]
    assert isinstance(comparison, CompareResult)
    cli = _cli_csv("compare", "baseline", "gate", "--metric", "contain", "--strata", "question_type",
                   "--db", str(folder / "study.duckdb"))
    _same(comparison.table, cli, list(cli[0]))
    by_stratum = {row["stratum"]: row for row in comparison.table.iter_rows(named=True)}
    assert list(by_stratum) == ["all", "bridge", "comparison"]
    for stratum, row in by_stratum.items():
        pairs = [(a, b) for a, b in zip(facts["baseline"], facts["gate"], strict=True)
                 if stratum == "all" or a.question_type == stratum]
        assert row["n"] == len(pairs)
        assert row["acc_a"] == pytest.approx(sum(a.right for a, _ in pairs) / len(pairs))
        assert (row["a_only"], row["b_only"]) == (sum(a.right and not b.right for a, b in pairs),
                                                  sum(b.right and not a.right for a, b in pairs))
    assert "gate vs baseline (contain): paired on all 30 question ids" in comparison.caption


def test_results_render_as_the_cli_prints_and_chart(example):
    folder, names, _ = example
    comparison = names["comparison"]
    assert isinstance(comparison, CompareResult)
    cli = CliRunner().invoke(main, ["compare", "baseline", "gate", "--metric", "contain", "--strata",
                                    "question_type", "--format", "latex", "--db", str(folder / "study.duckdb")])
    assert names["latex"] == comparison.to_latex() == cli.stdout
    charted = [row for rows in comparison.chart().to_dict()["datasets"].values() for row in rows if "delta" in row]
    assert sorted(row["delta"] for row in charted) == sorted(comparison.table["delta"].to_list())
    bundle = comparison._repr_mimebundle_()
    assert comparison.caption in bundle["text/html"] and "<table" in bundle["text/html"]


def test_the_paired_funnel_and_the_replay_display(example):
    folder, names, facts = example
    funnel = names["funnel"]
    assert isinstance(funnel, FunnelResult) and funnel.paired
    read_row = funnel.table.filter((pl.col("scope") == "all hops") & (pl.col("stage") == "read")).row(0, named=True)
    assert read_row["share_a"] == pytest.approx(sum(o.read for o in facts["baseline"]) / N_QUESTIONS)
    assert read_row["share_b"] == pytest.approx(1.0)
    assert funnel.chart().to_dict()["$schema"].startswith("https://vega.github.io/schema/vega-lite/")
    replay = names["replay"]
    assert isinstance(replay, Replay)
    first_wrong = next(i for i, o in enumerate(facts["baseline"]) if not o.right)
    assert replay.header["question"] == f"Where was Person {first_wrong} born?"
    assert replay.steps["kind"].to_list()[-1] == "final"
    shown = replay._repr_mimebundle_()["text/html"]
    assert f"Town{first_wrong}" in shown and f"City{first_wrong}" in shown


def test_views_sql_and_the_sandbox(example):
    folder, names, _ = example
    wh = trajscope.open(folder / "study.duckdb")
    listed = _cli_csv_views(folder / "study.duckdb")
    assert names["views"].rows() == listed  # type: ignore[attr-defined]
    assert wh.sql("SELECT count(*) AS n FROM trajectories WHERE run_id = $r", {"r": "gate"}).item() == N_QUESTIONS
    assert wh.sql("SELECT count(*) AS n FROM trajectories").item() == 2 * N_QUESTIONS
    with pytest.raises(ForbiddenStatement):
        wh.sql("DELETE FROM runs")
    with pytest.raises(ForbiddenStatement):
        wh.sql("SELECT * FROM read_text('/etc/passwd')", {})
    with pytest.raises(UnknownView, match="no column nope"):
        wh.view("run_summary", nope=1)
    with pytest.raises(UnknownView, match="no view or table 'nothing'"):
        wh.view("nothing")
    # Nothing holds the file between calls: another ingest can write to it at once (the same records: no change).
    again = trajscope.ingest([folder / "runs" / "gate.jsonl"], db=folder / "study.duckdb", echo=None)
    assert (again.records, again.new, again.replaced, again.unchanged) == (N_QUESTIONS, 0, 0, N_QUESTIONS)


def _cli_csv_views(db: Path) -> list[tuple[str, str]]:
    result = CliRunner().invoke(main, ["views", "--db", str(db)])
    assert result.exit_code == 0, result.output
    return [tuple(re.fullmatch(r"(\S+) +(.*)", line).groups()) for line in result.stdout.splitlines()]


def test_report_and_agreement_are_the_clis(example):
    folder, _, _ = example
    wh = trajscope.open(folder / "study.duckdb")
    report = wh.report("read-gate", ["baseline", "gate"], tables=["rg_plane"])
    assert isinstance(report, PaperReport) and report.names == ("rg_plane",)
    cli = CliRunner().invoke(main, ["report", "read-gate", "--runs", "baseline,gate", "--table", "rg_plane",
                                    "--format", "markdown", "--db", str(folder / "study.duckdb")])
    assert cli.exit_code == 0, cli.output
    assert report.to_markdown() == cli.stdout
    agreement = wh.agreement(["baseline", "gate"])
    cli = CliRunner().invoke(main, ["agreement", "baseline", "gate", "--db", str(folder / "study.duckdb")])
    assert cli.exit_code == 0, cli.output
    assert agreement.to_markdown() == cli.stdout


def test_ingest_is_callable_after_its_stage_package_is_imported():
    import trajscope.ingest.importers  # binds the stage package as trajscope.ingest

    assert callable(trajscope.ingest) and trajscope.ingest.importers is not None
