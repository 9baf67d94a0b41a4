"""`trajscope compare` and `trajscope judge` end to end: printed numbers equal the SQL views'."""
from __future__ import annotations

import csv
import io

import numpy as np
import pytest
from click.testing import CliRunner
from fixtures.forensics.builders import final, read, search, trajectory
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.contingency_tables import StratifiedTable, mcnemar

from trajscope.analysis.queries import efficiency_frontier, extractor_agreement, judge_agreement, post_read_odds_ratio
from trajscope.cli import main
from trajscope.engine.judge_pass import judge_run
from trajscope.engine.mock_llm import MockLLMServer, reply_json
from trajscope.format import Run
from trajscope.warehouse import ingest_trajectories, open_warehouse

N_QUESTIONS = 40


def _run(run_id: str, seed: int, p_right: float, p_read: float, qids: range) -> list:
    rng = np.random.default_rng(seed)
    run = Run(run_id=run_id, dataset="hotpotqa", condition=run_id)
    records = []
    for i in qids:
        gold_chunk = (f"c{i}", f"Person {i} was born in City{i}.")
        steps = [search((gold_chunk[0], f"Person {i} biography"))]
        if rng.random() < p_read:
            steps.append(read(gold_chunk))
        answer = f"City{i}" if rng.random() < p_right else f"Town{i}"
        steps.append(final(answer))
        records.append(trajectory(
            run, f"q{i:03d}", f"Where was Person {i} born?", f"City{i}", steps,
            gold_chunks=(gold_chunk[0],), question_type="bridge" if i % 3 else "comparison",
            cost=0.001 * (1 + len(steps)),
        ))
    return records


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("compare") / "wh.duckdb"
    records = (
        _run("base", 1, 0.45, 0.4, range(N_QUESTIONS))
        + _run("gate", 2, 0.65, 1.0, range(N_QUESTIONS))
        + _run("partial", 3, 0.5, 0.5, range(20, N_QUESTIONS + 10))
        + _run("other", 4, 0.5, 0.5, range(100, 110))
    )
    ingest_trajectories(path, records)
    for run_id in ("base", "gate", "partial", "other"):
        judge_run(path, run_id, extractors=("regex",))
    return path


def _compare_csv(db, *args) -> list[dict[str, str]]:
    # These tests check against the views' Contain-Acc columns; the default metric is 'correct'.
    metric = [] if "--metric" in args else ["--metric", "contain"]
    result = CliRunner().invoke(main, ["compare", *args, *metric, "--format", "csv", "--db", str(db)])
    assert result.exit_code == 0, result.output
    return list(csv.DictReader(io.StringIO(result.stdout)))


def _sql(db, query: str, params=None):
    with open_warehouse(db) as con:
        return con.execute(query, params or []).fetchall()


def test_compare_numbers_equal_the_views(db):
    (row,) = _compare_csv(db, "base", "gate")
    acc = dict(_sql(db, "SELECT run_id, contain_acc FROM run_summary WHERE run_id IN ('base', 'gate')"))
    a_only, b_only, both_wrong = _sql(db, """
        SELECT count(*) FILTER (a.contain = 1 AND b.contain = 0), count(*) FILTER (a.contain = 0 AND b.contain = 1),
               count(*) FILTER (a.contain = 0 AND b.contain = 0)
        FROM trajectory_facts a JOIN trajectory_facts b USING (question_id)
        WHERE a.run_id = 'base' AND b.run_id = 'gate'""")[0]
    assert row["stratum"] == "all" and int(row["n"]) == N_QUESTIONS
    assert float(row["acc_a"]) == pytest.approx(acc["base"], abs=1e-12)
    assert float(row["acc_b"]) == pytest.approx(acc["gate"], abs=1e-12)
    assert float(row["delta"]) == pytest.approx(acc["gate"] - acc["base"], abs=1e-12)
    assert (int(row["a_only"]), int(row["b_only"])) == (a_only, b_only)
    table = np.array([[N_QUESTIONS - a_only - b_only - both_wrong, a_only], [b_only, both_wrong]])
    assert float(row["mcnemar_exact_p"]) == pytest.approx(mcnemar(table, exact=True).pvalue, abs=1e-9)
    assert float(row["mcnemar_chi2_p"]) == pytest.approx(mcnemar(table, exact=False).pvalue, abs=1e-9)
    assert float(row["ci_low"]) <= float(row["delta"]) <= float(row["ci_high"])


def test_compare_default_metric_is_the_papers_correctness_as_on_the_compare_page(db):
    from trajscope.analysis.queries import DEFAULT_COMPARE_METRIC

    (default,) = list(csv.DictReader(io.StringIO(CliRunner().invoke(
        main, ["compare", "base", "gate", "--format", "csv", "--db", str(db)]).stdout)))
    (correct,) = _compare_csv(db, "base", "gate", "--metric", "correct")
    acc = dict(_sql(db, """SELECT run_id, avg(CASE WHEN correct THEN 1.0 ELSE 0.0 END) FROM trajectory_correctness
                           WHERE run_id IN ('base', 'gate') GROUP BY run_id"""))
    assert DEFAULT_COMPARE_METRIC == "correct" and default == correct
    assert float(default["acc_a"]) == pytest.approx(acc["base"], abs=1e-12)


def test_compare_strata_rows_equal_type_breakdown(db):
    rows = _compare_csv(db, "base", "gate", "--strata", "question_type")
    assert [r["stratum"] for r in rows] == ["all", "bridge", "comparison"]
    by_type = {(run, qt): (n, acc) for run, qt, n, acc in _sql(
        db, "SELECT run_id, question_type, n, contain_acc FROM type_breakdown WHERE run_id IN ('base', 'gate')")}
    for row in rows[1:]:
        n, acc_a = by_type[("base", row["stratum"])]
        assert int(row["n"]) == n
        assert float(row["acc_a"]) == pytest.approx(acc_a, abs=1e-12)
        assert float(row["acc_b"]) == pytest.approx(by_type[("gate", row["stratum"])][1], abs=1e-12)


def test_zero_read_rescue_uses_the_baseline_voluntary_zero_read_finals(db):
    (row,) = _compare_csv(db, "base", "gate", "--zero-read")
    n_zero, acc = _sql(db, """SELECT count(*), avg(contain) FROM trajectory_facts
                              WHERE run_id = 'base' AND read_count = 0 AND end_reason = 'final'""")[0]
    assert int(row["n"]) == n_zero > 0
    assert float(row["acc_a"]) == pytest.approx(acc, abs=1e-12)


def test_partial_overlap_is_labelled_and_unpaired_runs_are_refused(db):
    result = CliRunner().invoke(main, ["compare", "base", "partial", "--db", str(db)])
    assert result.exit_code == 0, result.output
    assert "paired on the 20 shared question ids; 20 only in A and 10 only in B are excluded" in result.output
    refused = CliRunner().invoke(main, ["compare", "base", "other", "--db", str(db)])
    assert refused.exit_code != 0
    assert "no shared question ids" in refused.output and "Traceback" not in refused.output
    missing = CliRunner().invoke(main, ["compare", "base", "nope", "--db", str(db)])
    assert missing.exit_code != 0 and "no trajectories for run 'nope'" in missing.output


def test_compare_markdown_and_latex_render_the_same_delta(db):
    (row,) = _compare_csv(db, "base", "gate")
    delta = f"{float(row['delta']):.3f}"
    for fmt in ("markdown", "latex"):
        result = CliRunner().invoke(main, ["compare", "base", "gate", "--format", fmt, "--db", str(db)])
        assert result.exit_code == 0 and delta in result.output


def test_judge_command_with_mock_llm_and_agreement(db, tmp_path, monkeypatch):
    monkeypatch.setenv("TRAJSCOPE_CACHE", str(tmp_path / "cache"))

    def responder(request):
        prediction = request.text().split("Predicted answer:")[1].split("\n")[0]
        # A judge that disagrees with Contain-Acc on questions 0-4, to give kappa something to measure.
        question = request.text().split("Question: Where was Person ")[1].split(" ")[0]
        right = "City" in prediction
        return reply_json({"equivalent": (not right) if int(question) < 5 else right, "rationale": "mock"})

    with MockLLMServer(responder) as server:
        result = CliRunner().invoke(main, ["judge", "gate", "--judge", server.model_spec, "--db", str(db)])
    assert result.exit_code == 0, result.output
    assert f"{N_QUESTIONS} mock verdicts added (0 failed)" in result.output
    pairs = _sql(db, """SELECT l.score, c.score FROM judgments l JOIN judgments c USING (trajectory_id)
                        WHERE l.judge = 'llm' AND c.judge = 'contain' AND trajectory_id LIKE 'gate::%'""")
    with open_warehouse(db) as con:
        agreement = judge_agreement(con, "llm:mock", "contain", run_id="gate").agreement
    assert agreement.n == N_QUESTIONS
    assert agreement.kappa == pytest.approx(cohen_kappa_score([p[0] for p in pairs], [p[1] for p in pairs]), abs=1e-9)
    # A second pass finds every trajectory judged by that model already.
    with MockLLMServer(responder) as server:
        again = CliRunner().invoke(main, ["judge", "gate", "--judge", server.model_spec, "--db", str(db)])
        assert server.chat_requests == []
    assert "0 mock verdicts added" in again.output


def test_post_read_odds_ratio_tables_come_from_failure_rg(db):
    with open_warehouse(db) as con:
        result = post_read_odds_ratio(con, "base", "partial")
    n_post = _sql(db, "SELECT count(*) FROM failure_rg WHERE extractor = 'regex' AND label = 'post_gold_read' "
                      "AND run_id IN ('base', 'partial')")[0][0]
    assert sum(t[0][0] + t[1][0] for t in result.tables.values()) == n_post
    stack = np.array([result.tables[k] for k in sorted(result.tables)], dtype=float)
    ref = StratifiedTable(np.transpose(stack, (1, 2, 0)))
    assert result.result.odds_ratio == pytest.approx(ref.oddsratio_pooled, abs=1e-9)


def test_table4_marginal_and_stratified_odds_ratios_from_the_cli(db):
    from statsmodels.stats.contingency_tables import Table2x2

    with open_warehouse(db) as con:
        result = post_read_odds_ratio(con, "base", "gate")
        counts = dict(con.execute("""SELECT run_id, count(*) FILTER (label = 'post_gold_read') FROM failure_rg
                                     WHERE extractor = 'regex' GROUP BY run_id""").fetchall())
    n = dict(_sql(db, "SELECT run_id, count(*) FROM trajectory_correctness WHERE correct IS NOT NULL GROUP BY run_id"))
    # The marginal table is every judged trajectory of both runs, computed here from the label view directly.
    marginal = np.array([[counts["gate"], n["gate"] - counts["gate"]], [counts["base"], n["base"] - counts["base"]]])
    ref = Table2x2(marginal)
    assert result.marginal.n == n["gate"] + n["base"] and 0 not in result.tables
    assert result.marginal.odds_ratio == pytest.approx(ref.oddsratio, rel=1e-9)
    assert (result.marginal.ci_low, result.marginal.ci_high) == pytest.approx(ref.oddsratio_confint(), rel=1e-9)
    stack = np.array([result.tables[k] for k in sorted(result.tables)], dtype=float)
    assert result.result.odds_ratio == pytest.approx(StratifiedTable(np.transpose(stack, (1, 2, 0))).oddsratio_pooled)
    out = CliRunner().invoke(main, ["compare", "base", "gate", "--table4", "--digits", "4", "--db", str(db)])
    assert out.exit_code == 0, out.output
    assert "Table 4 (gate vs base)" in out.output
    marginal_line = next(line for line in out.output.splitlines() if "marginal OR" in line)
    assert f"{result.marginal.odds_ratio:.4f}" in marginal_line and f"{result.marginal.ci_low:.4f}" in marginal_line
    mh_line = next(line for line in out.output.splitlines() if "Mantel-Haenszel OR" in line)
    assert f"{result.result.odds_ratio:.4f}" in mh_line and str(result.n_stratified) in mh_line


def test_efficiency_frontier_matches_run_efficiency(db):
    with open_warehouse(db) as con:
        frontier = efficiency_frontier(con, ["base", "gate"])
        agreement = extractor_agreement(con, "base")
    rows = dict((r[0], r[1:]) for r in _sql(db, "SELECT run_id, accuracy, retrieved_tokens FROM run_efficiency"))
    for point in frontier.points:
        assert (point.accuracy, point.retrieved_tokens) == pytest.approx(rows[point.run_id])
    # gate reads more (more retrieved tokens) and is more accurate: both are Pareto-optimal.
    assert [p.on_frontier for p in frontier.points] == [True, True]
    # Only the regex extractor was run: there is no spaCy labelling to agree with.
    assert agreement.agreement is None


def test_compare_margin_adds_tost_equal_to_statsmodels(db):
    from statsmodels.stats.weightstats import ttost_paired

    (row,) = _compare_csv(db, "base", "gate", "--margin", "0.3")
    pairs = _sql(db, """SELECT a.contain, b.contain FROM trajectory_facts a JOIN trajectory_facts b USING (question_id)
                        WHERE a.run_id = 'base' AND b.run_id = 'gate' ORDER BY question_id""")
    a, b = np.array(pairs, dtype=float).T
    assert float(row["tost_p"]) == pytest.approx(ttost_paired(b, a, -0.3, 0.3)[0], abs=1e-9)
    assert row["equivalent"] in ("true", "false")


def test_judge_command_errors_are_one_line(db, tmp_path):
    unknown = CliRunner().invoke(main, ["judge", "no-such-run", "--db", str(db)])
    assert unknown.exit_code != 0 and "no run 'no-such-run'" in unknown.output
    assert "Traceback" not in unknown.output
    missing = CliRunner().invoke(main, ["judge", "base", "--db", str(tmp_path / "absent.duckdb")])
    assert missing.exit_code != 0 and "no warehouse here" in missing.output


def test_compare_reads_a_current_warehouse_without_any_write_open(db, monkeypatch):
    import trajscope.warehouse.read._upgrade as upgrade

    def no_write(*args, **kwargs):
        raise AssertionError("compare opened the warehouse for writing")

    monkeypatch.setattr(upgrade, "open_warehouse", no_write)
    result = CliRunner().invoke(main, ["compare", "base", "gate", "--format", "csv", "--db", str(db)])
    assert result.exit_code == 0, result.output


def test_compare_brings_an_old_warehouse_up_to_date_through_the_read_path(db, tmp_path):
    import shutil

    import duckdb as _duckdb

    old = tmp_path / "old.duckdb"
    shutil.copy(db, old)
    with _duckdb.connect(str(old)) as con:  # as an older trajscope left it: a view missing
        con.execute("DROP VIEW IF EXISTS run_summary CASCADE")
        con.execute("UPDATE views_state SET views_hash = 'old'")
    result = CliRunner().invoke(main, ["compare", "base", "gate", "--format", "csv", "--db", str(old)])
    assert result.exit_code == 0, result.output
    with _duckdb.connect(str(old), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM duckdb_views() WHERE view_name = 'run_summary'").fetchall() == [(1,)]


def test_agreement_command_prints_kappas_and_the_pooled_cooccurrence(db):
    from trajscope.analysis.queries import pooled_cooccurrence

    result = CliRunner().invoke(main, ["agreement", "base", "gate", "--db", str(db)])
    assert result.exit_code == 0, result.output
    with open_warehouse(db) as con:
        extractors = extractor_agreement(con, ["base", "gate"])
        pooled = pooled_cooccurrence(con, ["base", "gate"]).frame.row(0, named=True)
    assert "discipline indicator: regex vs spaCy" in result.output and "every run" not in result.output
    # Pooled cells, recounted from the label view itself.
    expected = _sql(db, """SELECT count(*), count(*) FILTER (is_discipline AND NOT is_post_gold_read),
                                  count(*) FILTER (is_discipline AND is_post_gold_read)
                           FROM failure_rg WHERE extractor = 'regex' AND run_id IN ('base', 'gate')""")[0]
    assert (pooled["extractor"], pooled["n_wrong"], pooled["discipline_only"], pooled["discipline_and_post"]) == (
        "regex", *expected)
    assert pooled["n_runs"] == 2
    assert f"{pooled['discipline_only_share']:.3f}" in result.output
    assert extractors.agreement is None or f"{extractors.agreement.kappa:.3f}" in result.output
