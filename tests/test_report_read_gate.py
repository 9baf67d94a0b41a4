"""`trajscope report read-gate`: every cell recomputed from the fixture records in plain Python / statsmodels."""

from __future__ import annotations

import csv
import io
from collections import defaultdict

import numpy as np
import pytest
from click.testing import CliRunner
from fixtures.report.read_gate import JUDGE_A, JUDGE_B, RUNS, build, run_id
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.contingency_tables import StratifiedTable, Table2x2, mcnemar
from statsmodels.stats.multitest import multipletests

from trajscope.analysis.report import Interval, WithDelta, build_report, report_figures
from trajscope.analysis.stats import cluster_bootstrap_delta, paired_bootstrap_delta
from trajscope.cli import main
from trajscope.engine.judge_pass import judge_run
from trajscope.format import ReadStep
from trajscope.warehouse import ingest_trajectories, open_readonly

TOL = 1e-9
ALL_RUNS = [run_id(*spec[:4]) for spec in RUNS]


@pytest.fixture(scope="module")
def fixture(tmp_path_factory):
    built = build()
    path = tmp_path_factory.mktemp("rg") / "wh.duckdb"
    ingest_trajectories(path, built.records)
    for rid in ALL_RUNS:
        judge_run(path, rid, extractors=("regex", "spacy"))
    with open_readonly(path) as con:
        # The fixture is built so that a read passage always names the question's entity: discipline is no-read.
        low = con.execute(
            "SELECT count(*) FROM entity_coverage e JOIN trajectories t USING (trajectory_id) "
            "WHERE t.read_count > 0 AND e.coverage < 0.8"
        ).fetchone()[0]
        assert low == 0
        tables = {
            t.name: t
            for t in build_report(
                con, "read-gate", ALL_RUNS, db_path=path, sweep="reasoning_effort", human_labels=built.human
            )
        }
    return path, built, tables


class Record:
    """What the papers' rules need from one fixture trajectory, read off the record itself."""

    def __init__(self, t):
        scores = defaultdict(list)
        for j in t.judgments:
            scores[(j.judge, j.judge_model)].append(j.score)
        llm = [s for (judge, _), v in scores.items() if judge == "llm" for s in v]
        self.correct = (np.mean(llm) >= 0.5) if llm else scores[("contain", None)][0] >= 0.5
        self.verdicts = {model: v[0] >= 0.5 for (judge, model), v in scores.items() if judge == "llm"}
        reads = [s for s in t.steps if isinstance(s, ReadStep)]
        self.read_ids = {p.chunk_id for s in reads for p in s.passages}
        self.zero_read = not reads and t.end_reason == "final"
        self.gold_read = bool(self.read_ids & set(t.question.gold_chunk_ids))
        self.discipline = not self.correct and not reads
        self.post = not self.correct and not self.discipline and self.gold_read


def _records(built):
    out = defaultdict(dict)
    for t in built.records:
        out[t.run.run_id][t.question.question_id] = Record(t)
    return out


def _runs(dataset, condition, effort="minimal"):
    return [run_id(*s[:4]) for s in RUNS if s[0] == dataset and s[1] == condition and s[3] == effort]


def _pairs(recs, dataset, a_cond, b_cond, subset=False):
    rows = []
    for ra, rb in zip(_runs(dataset, a_cond), _runs(dataset, b_cond), strict=False):  # seeds 0, 1 in order
        for qid, ta in recs[ra].items():
            if subset and not ta.zero_read:
                continue
            rows.append((qid, float(ta.correct), float(recs[rb][qid].correct), ra))
    return rows


def _expected_delta(rows):
    qid = [r[0] for r in rows]
    a = np.array([r[1] for r in rows])
    b = np.array([r[2] for r in rows])
    n_seeds = len({r[3] for r in rows})
    ci = paired_bootstrap_delta(a, b) if n_seeds == 1 else cluster_bootstrap_delta(qid, a, b)
    table = np.array(
        [
            [((a == 1) & (b == 1)).sum(), ((a == 1) & (b == 0)).sum()],
            [((a == 0) & (b == 1)).sum(), ((a == 0) & (b == 0)).sum()],
        ]
    )
    return a, b, ci, mcnemar(table, exact=True).pvalue


def _cells(table):
    return {row[0]: dict(zip([c.key for c in table.columns], row, strict=False)) for row in table.rows}


@pytest.mark.parametrize("name,subset", [("rg_t1", True), ("rg_t3", False)])
def test_rescue_and_population_delta_cells(fixture, name, subset):
    _, built, tables = fixture
    recs = _records(built)
    cells = _cells(tables[name])
    assert list(cells) == ["hotpotqa", "2wiki"]  # musique has no Read-Gate run
    p_values = []
    for dataset in cells:
        rows = _pairs(recs, dataset, "baseline", "read_gate", subset)
        a, b, ci, p = _expected_delta(rows)
        row = cells[dataset]
        assert row["n"] == len(rows)
        assert row["no_gate"] == pytest.approx(100 * a.mean(), abs=TOL)
        assert row["read_gate"] == pytest.approx(100 * b.mean(), abs=TOL)
        assert row["delta"].value == pytest.approx(100 * (b - a).mean(), abs=TOL)
        assert (row["delta"].low, row["delta"].high) == pytest.approx((100 * ci.low, 100 * ci.high), abs=TOL)
        assert row["mcnemar_p"] == pytest.approx(p, abs=TOL)
        p_values.append(p)
        if name == "rg_t3":
            base = [t for r in _runs(dataset, "baseline") for t in recs[r].values()]
            assert row["baseline_discipline"] == pytest.approx(100 * np.mean([t.discipline for t in base]), abs=TOL)
    holm = multipletests(p_values, method="holm")[1]
    assert [cells[d]["holm_p"] for d in cells] == pytest.approx(list(holm), abs=TOL)


def test_mechanism_ablation_cells(fixture):
    _, built, tables = fixture
    recs = _records(built)
    for dataset, row in _cells(tables["rg_t2"]).items():
        acc = {
            c: 100 * np.mean([t.correct for r in _runs(dataset, c) for t in recs[r].values()])
            for c in ("baseline", "read_gate", "context_injection")
        }
        assert row["no_gate"] == pytest.approx(acc["baseline"], abs=TOL)
        for c in ("read_gate", "context_injection"):
            assert isinstance(row[c], WithDelta)
            assert row[c].value == pytest.approx(acc[c], abs=TOL)
            assert row[c].delta == pytest.approx(acc[c] - acc["baseline"], abs=TOL)


def test_odds_ratio_cells_equal_statsmodels(fixture):
    path, built, tables = fixture
    recs = _records(built)
    passages = {}
    for t in built.records:
        passages[(t.run.run_id, t.question.question_id)] = len(_records_read(t))
    for dataset, row in _cells(tables["rg_t4"]).items():
        strata = np.zeros((5, 2, 2))
        for arm, cond in ((0, "read_gate"), (1, "baseline")):
            for r in _runs(dataset, cond):
                for qid, t in recs[r].items():
                    strata[min(passages[(r, qid)], 4), arm, 0 if t.post else 1] += 1
        marginal = Table2x2(strata.sum(axis=0))
        assert row["n"] == strata.sum()
        assert row["marginal_or"].value == pytest.approx(marginal.oddsratio, abs=TOL)
        assert (row["marginal_or"].low, row["marginal_or"].high) == pytest.approx(marginal.oddsratio_confint(), abs=TOL)
        informative = [s for s in strata[1:] if s.sum() > 1]
        st = StratifiedTable([s for s in informative])
        assert row["n_read"] == strata[1:].sum()
        assert row["mh_or"].value == pytest.approx(st.oddsratio_pooled, abs=TOL)
        assert (row["mh_or"].low, row["mh_or"].high) == pytest.approx(st.oddsratio_pooled_confint(), abs=TOL)
        assert row["cmh_p"] == pytest.approx(st.test_null_odds(correction=False).pvalue, abs=TOL)


def _records_read(t):
    return {p.chunk_id for s in t.steps if isinstance(s, ReadStep) for p in s.passages}


def test_sweep_cells(fixture):
    _, built, tables = fixture
    recs = _records(built)
    rows = tables["rg_t5"].rows
    assert [(r[0], r[2]) for r in rows] == [("musique", "minimal"), ("musique", "medium"), ("musique", "high")]
    first = recs[run_id("musique", "baseline", 0, "minimal")]
    zero_first = 100 * np.mean([t.zero_read for t in first.values()])
    for row in rows:
        run = recs[run_id("musique", "baseline", 0, row[2])]
        zero = 100 * np.mean([t.zero_read for t in run.values()])
        fixed = sum(1 for q, t in run.items() if t.correct and not first[q].correct)
        broken = sum(1 for q, t in run.items() if not t.correct and first[q].correct)
        assert row[4] == pytest.approx(zero, abs=TOL) and row[5] == pytest.approx(zero - zero_first, abs=TOL)
        assert row[6] == pytest.approx(100 * np.mean([t.correct for t in run.values()]), abs=TOL)
        assert row[7] == fixed - broken


def test_cooccurrence_cells_and_kappa(fixture):
    _, built, tables = fixture
    wrong = [t for r in _records(built).values() for t in r.values() if not t.correct]
    table = tables["rg_cooc"]
    for row in table.rows:
        assert row[1] == len(wrong)
        only_disc = sum(t.discipline and not t.gold_read for t in wrong)
        both = sum(t.discipline and t.gold_read for t in wrong)  # a no-read trajectory never read gold
        post_only = sum(t.post for t in wrong)
        assert row[2:] == pytest.approx(
            (
                100 * only_disc / len(wrong),
                100 * post_only / len(wrong),
                100 * both / len(wrong),
                100 * (len(wrong) - only_disc - both - post_only) / len(wrong),
            ),
            abs=TOL,
        )
    disc = [t.discipline for t in wrong]
    expected = 1.0 if len(set(disc)) == 1 else cohen_kappa_score(disc, disc)
    assert f"κ = {expected:.3f} (n = {len(wrong):,})" in table.notes[0]


def test_judge_robustness_cells(fixture):
    # Table 18 as analysis.queries.judge_robustness defines it: judge A over every trajectory it judged, judge B
    # on its sample reweighted to the run's strata of A's verdict; overall row: runs weighted by their N.
    _, built, tables = fixture
    recs = _records(built)
    rows = {r[0]: r for r in tables["rg_t18"].rows}
    sizes, accs_a, accs_b, all_a, all_b = [], [], [], [], []
    for rid in ALL_RUNS:
        population = list(recs[rid].values())
        shared = [t for t in population if JUDGE_B in t.verdicts]
        a = [t.verdicts[JUDGE_A] for t in shared]
        b = [t.verdicts[JUDGE_B] for t in shared]
        acc_a = np.mean([t.verdicts[JUDGE_A] for t in population])
        acc_b = 0.0
        for stratum in (True, False):
            weight = np.mean([t.verdicts[JUDGE_A] == stratum for t in population])
            sample = [t.verdicts[JUDGE_B] for t in shared if t.verdicts[JUDGE_A] == stratum]
            acc_b += weight * np.mean(sample) if weight else 0.0
        row = rows[rid]
        assert row[1:3] == (len(population), len(shared))
        assert row[3] == pytest.approx(100 * acc_a, abs=TOL) and row[4] == pytest.approx(100 * acc_b, abs=TOL)
        assert row[5] == pytest.approx(100 * (acc_b - acc_a), abs=TOL)
        expected_kappa = 1.0 if len(set(a) | set(b)) == 1 else cohen_kappa_score(a, b)
        assert row[6] == pytest.approx(expected_kappa, abs=TOL)
        sizes.append(len(population))
        accs_a.append(acc_a)
        accs_b.append(acc_b)
        all_a += a
        all_b += b
    w = np.array(sizes) / sum(sizes)
    overall = rows["all (reweighted)"]
    assert overall[1:3] == (sum(sizes), len(all_a))
    assert overall[3] == pytest.approx(100 * float(w @ accs_a), abs=TOL)
    assert overall[5] == pytest.approx(100 * float(w @ (np.array(accs_b) - np.array(accs_a))), abs=TOL)
    assert overall[6] == pytest.approx(cohen_kappa_score(all_a, all_b), abs=TOL)


def test_judge_error_correction_cells(fixture):
    _, built, tables = fixture
    recs = _records(built)
    pairs = [(recs[r][q].verdicts[JUDGE_A], right) for (r, q), right in built.human.items()]
    se = np.mean([j for j, h in pairs if h])
    sp = np.mean([not j for j, h in pairs if not h])
    n_right, n_wrong = sum(h for _, h in pairs), sum(not h for _, h in pairs)
    for row in tables["rg_judge_error"].rows:
        observed = [t.verdicts[JUDGE_A] for t in recs[row[0]].values()]
        q = np.mean(observed)
        p = (q + sp - 1) / (se + sp - 1)
        var = (
            q * (1 - q) / len(observed) + p**2 * se * (1 - se) / n_right + (1 - p) ** 2 * sp * (1 - sp) / n_wrong
        ) / (se + sp - 1) ** 2
        half = 1.959963984540054 * np.sqrt(var)
        assert row[2] == pytest.approx(100 * q, abs=TOL)
        clip = lambda v: min(1.0, max(0.0, v))  # noqa: E731
        assert (row[3].value, row[3].low, row[3].high) == pytest.approx(
            (100 * clip(p), 100 * clip(p - half), 100 * clip(p + half)), abs=1e-7
        )


def test_tables_without_their_input_say_why(fixture):
    path, _, _ = fixture
    with open_readonly(path) as con:
        tables = {
            t.name: t for t in build_report(con, "read-gate", _runs("musique", "baseline", "minimal"), db_path=path)
        }
    for name in ("rg_t1", "rg_t2", "rg_t3", "rg_t4", "rg_t5", "rg_t17", "rg_judge_error"):
        assert tables[name].not_applicable and not tables[name].rows, name
    assert "read_gate" in tables["rg_t1"].not_applicable
    assert "--sweep" in tables["rg_t5"].not_applicable
    result = CliRunner().invoke(
        main, ["report", "read-gate", "--runs", "musique-baseline-s0", "--format", "markdown", "--db", str(path)]
    )
    assert result.exit_code == 0, result.output
    assert "_Does not apply: no dataset has both a 'baseline' run and a gate run" in result.output


def test_unknown_run_is_a_message_not_a_traceback(fixture):
    path, _, _ = fixture
    result = CliRunner().invoke(main, ["report", "read-gate", "--runs", "nope", "--db", str(path)])
    assert result.exit_code != 0 and "no run 'nope' in the warehouse" in result.output
    assert "Traceback" not in result.output


def test_footnote_names_n_seeds_version_and_warehouse_hash(fixture):
    path, _, tables = fixture
    import hashlib

    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    footnote = tables["rg_t3"].footnote
    assert "n = 216 trajectories from 6 run(s); seeds: 0, 1; trajscope " in footnote
    assert f"warehouse sha256:{digest}" in footnote


def test_csv_interval_columns_carry_full_precision(fixture):
    path, _, tables = fixture
    result = CliRunner().invoke(
        main,
        [
            "report",
            "read-gate",
            *sum((["--runs", r] for r in ALL_RUNS), []),
            "--table",
            "rg_t3",
            "--format",
            "csv",
            "--db",
            str(path),
        ],
    )
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if not line.startswith("#")]
    rows = list(csv.DictReader(io.StringIO("\n".join(lines))))
    expected = _cells(tables["rg_t3"])
    for row in rows:
        assert float(row["delta_low"]) == expected[row["dataset"]]["delta"].low
        assert isinstance(expected[row["dataset"]]["delta"], Interval)


def test_failure_plane_points_and_figure(fixture, tmp_path):
    # Figure 7: one point per (dataset, condition, reasoning effort); seeds pool, efforts stay apart.
    path, built, tables = fixture
    recs = _records(built)
    table = tables["rg_plane"]
    got = {(r[0], r[1], r[2]): dict(zip([c.key for c in table.columns], r, strict=True)) for r in table.rows}
    expected = {}
    for spec in RUNS:
        dataset, condition, _, effort = spec[:4]
        expected.setdefault((dataset, condition, effort), []).extend(
            recs[run_id(*spec[:4])].values())
    assert set(got) == set(expected)
    for key, trajectories in expected.items():
        assert got[key]["n"] == len(trajectories)
        assert got[key]["p_disc"] == pytest.approx(100 * np.mean([t.discipline for t in trajectories]), abs=TOL)
        assert got[key]["p_post"] == pytest.approx(100 * np.mean([t.post for t in trajectories]), abs=TOL)
    figure = next(f for f in report_figures(list(tables.values())) if f.name == "rg_plane")
    values = {(v["dataset"], v["label"]): v for v in figure.spec["data"]["values"]}
    gate = values[("hotpotqa", "read_gate (minimal)")]
    base = got[("hotpotqa", "baseline", "minimal")]
    assert (gate["base_disc"], gate["base_post"]) == (base["p_disc"], base["p_post"])  # the arrow's origin
    for dataset, condition, effort in got:  # every arrow starts at the same regime's baseline
        v = values[(dataset, f"{condition} ({effort})")]
        origin = got[(dataset, "baseline", effort)]
        assert (v["base_disc"], v["base_post"]) == (origin["p_disc"], origin["p_post"])
    out = tmp_path / "rg"
    result = CliRunner().invoke(main, ["report", "read-gate", *ALL_RUNS, "--format", "markdown", "--out", str(out),
                                       "--db", str(path)])
    assert result.exit_code == 0, result.output
    assert (out / "rg_plane.svg").read_text().startswith("<svg")
    assert (out / "rg_plane.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_run_without_a_read_action_is_named_off_the_plane(tmp_path):
    import msgspec

    built = build()
    rid = run_id("hotpotqa", "baseline", 0, "minimal")
    no_read = [msgspec.structs.replace(t, run=msgspec.structs.replace(t.run, config={"read_action": False}),
                                       steps=[s for s in t.steps if not isinstance(s, ReadStep)])
               for t in built.records if t.run.run_id == rid]
    path = tmp_path / "w.duckdb"
    ingest_trajectories(path, no_read)
    with open_readonly(path) as con:
        (table,) = [t for t in build_report(con, "read-gate", [rid], db_path=path) if t.name == "rg_plane"]
    assert table.rows == () and "no read action" in table.not_applicable and rid in table.not_applicable
