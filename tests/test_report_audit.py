"""`trajscope report audit`: every cell recomputed from the fixture records (plain Python, statsmodels)."""

from __future__ import annotations

import math
import re
import string
from collections import defaultdict

import numpy as np
import pytest
import statsmodels.api as sm
from click.testing import CliRunner
from fixtures.report.audit import build

from trajscope.analysis.audit import paired_bootstrap
from trajscope.analysis.report import build_report
from trajscope.cli import main
from trajscope.warehouse import open_readonly
from trajscope.warehouse.audit import load_audit_records

TOL = 1e-9


@pytest.fixture(scope="module")
def fixture(tmp_path_factory):
    records = build()
    path = tmp_path_factory.mktemp("audit") / "wh.duckdb"
    load_audit_records(path, records)
    with open_readonly(path) as con:
        tables = {t.name: t for t in build_report(con, "audit", [], db_path=path)}
    return path, records, tables


def _has(text, gold):
    return re.search(re.escape(gold), text, flags=re.IGNORECASE) is not None


def _squad(text):
    """SQuAD v1.1's normalisation, written out here: lower case, no punctuation, no articles."""
    text = "".join(ch for ch in text.lower() if ch not in string.punctuation)
    return " ".join(re.sub(r"\b(a|an|the)\b", " ", text).split())


def _mentions(text, record):
    """AP §11: substring presence of any normalised gold alias."""
    return any(_squad(g) and _squad(g) in _squad(text) for g in [record.gold, *(record.aliases or [])])


def _f1(record, baseline, intervention="none", sentinel=None):
    for o in record.outputs:
        if o.baseline == baseline and o.intervention == intervention and (sentinel is None or o.sentinel == sentinel):
            return o.f1
    return None


def _rows(table):
    return [dict(zip([c.key for c in table.columns], row, strict=False)) for row in table.rows]


def test_causal_delta_cells(fixture):
    _, records, tables = fixture
    expected = defaultdict(list)
    for r in sorted(records, key=lambda r: (r.cell, r.record_id)):
        for b in ("b2", "b3", "b4"):
            if _has(r.contexts["b1"], r.gold) and _has(r.contexts[b], r.gold):
                base = _f1(r, b)
                expected[(r.cell, b)].append(
                    (_f1(r, b, "remove", "[MASK]") - base, _f1(r, b, "placebo", "[MASK]") - base)
                )
    rows = _rows(tables["au_t1"])
    assert [(row["cell"], row["baseline"]) for row in rows] == sorted(expected)
    for row in rows:
        d = np.array(expected[(row["cell"], row["baseline"])])
        assert row["n"] == len(d)
        for key, values in (("remove", d[:, 0]), ("placebo", d[:, 1]), ("causal", d[:, 0] - d[:, 1])):
            ci = paired_bootstrap(values).scaled(100)
            assert row[key].value == pytest.approx(100 * values.mean(), abs=TOL)
            assert (row[key].low, row[key].high) == pytest.approx((ci.low, ci.high), abs=TOL)


def test_sentinel_panel_means(fixture):
    _, records, tables = fixture
    labels = {
        "[MASK]": "MASK",
        "[REMOVED]": "REMOVED",
        "the answer was removed": "NATURAL",
        "thing": "WORD",
        "###": "SYMBOL",
    }
    for row in _rows(tables["au_t2"]):
        sentinel = {v: k for k, v in labels.items()}[row["sentinel"]]
        pairs = [
            r
            for r in records
            if r.cell == row["cell"]
            and _has(r.contexts[row["baseline"]], r.gold)
            and _f1(r, row["baseline"], "remove", sentinel) is not None
        ]
        f1 = [_f1(r, row["baseline"], "remove", sentinel) for r in pairs]
        residual = [_f1(r, row["baseline"], "remove", sentinel) - _f1(r, "b1") for r in pairs]
        assert row["n"] == len(pairs)
        assert row["f1"] == pytest.approx(100 * np.mean(f1), abs=TOL)
        assert row["residual"].value == pytest.approx(100 * np.mean(residual), abs=TOL)
        if row["sentinel"] != "MASK":
            vs = [
                _f1(r, row["baseline"], "remove", sentinel) - _f1(r, row["baseline"], "remove", "[MASK]") for r in pairs
            ]
            assert row["vs_mask"].value == pytest.approx(100 * np.mean(vs), abs=TOL)


def test_pipeline_f1_and_operator_cells(fixture):
    _, records, tables = fixture
    means = {
        (c, b): 100 * np.mean([_f1(r, b) for r in records if r.cell == c])
        for c in ("C1", "C2")
        for b in ("b1", "b2", "b3", "b4")
    }
    for row in _rows(tables["au_t3"]):
        assert row["n"] == 40
        for b in ("b1", "b2", "b3", "b4"):
            assert row[b] == pytest.approx(means[(row["cell"], b)], abs=TOL)
    for row in _rows(tables["au_operator"]):
        c = row["cell"]
        assert row["compile"] == pytest.approx(means[(c, "b2")] - means[(c, "b1")], abs=TOL)
        assert row["verify"] == pytest.approx(means[(c, "b4")] - means[(c, "b2")], abs=TOL)
    assert [r["verify_sign"] for r in _rows(tables["au_operator"])] == ["−", "−−"]


def test_ols_equals_statsmodels_cluster_fit(fixture):
    _, records, tables = fixture
    rows = _rows(tables["au_ols"])
    for cell in ("C1", "C2"):
        y, x, groups = [], [], []
        for r in sorted((r for r in records if r.cell == cell), key=lambda r: r.record_id):
            for b in ("b1", "b2", "b3", "b4"):
                text = r.contexts[b].strip()
                log_len = math.log(1 + len(re.split(r"\s+", text)))
                dummies = [float(b == s) for s in ("b2", "b3", "b4")]
                y.append(_f1(r, b))
                x.append([1.0, *dummies, log_len, float(_mentions(text, r)), *[d * log_len for d in dummies]])
                groups.append(r.question_id)
        fit = sm.OLS(np.array(y), np.array(x)).fit(
            cov_type="cluster", cov_kwds={"groups": np.unique(groups, return_inverse=True)[1]}
        )
        ours = [row for row in rows if row["cell"] == cell]
        assert [row["term"] for row in ours][:6] == [
            "const",
            "setting=b2",
            "setting=b3",
            "setting=b4",
            "log_len",
            "ans_in",
        ]
        np.testing.assert_allclose([row["coef"] for row in ours], fit.params, atol=TOL, rtol=0)
        np.testing.assert_allclose([row["se"] for row in ours], fit.bse, atol=TOL, rtol=0)
        np.testing.assert_allclose([row["p"] for row in ours], fit.pvalues, atol=TOL, rtol=0)


def test_oracle_headroom_cells(fixture):
    _, records, tables = fixture
    for row in _rows(tables["au_oracle"]):
        recs = sorted((r for r in records if r.cell == row["cell"]), key=lambda r: r.record_id)
        f1 = {b: np.array([_f1(r, b) for r in recs]) for b in ("b1", "b2", "b3", "b4")}
        best = max(("b2", "b3", "b4"), key=lambda b: (f1[b].mean(), b))
        single = best if f1[best].mean() >= f1["b1"].mean() else "b1"
        oracle2 = np.maximum(f1["b1"], f1[best])
        oracle_all = np.max(np.column_stack(list(f1.values())), axis=1)
        assert row["best"] == single and row["n"] == len(recs)
        assert row["best_f1"] == pytest.approx(100 * f1[single].mean(), abs=TOL)
        assert row["oracle2"] == pytest.approx(100 * oracle2.mean(), abs=TOL)
        ci = paired_bootstrap(oracle2 - f1[single], n_resamples=2000).scaled(100)
        assert (row["gap2"].value, row["gap2"].low, row["gap2"].high) == pytest.approx(
            (ci.mean, ci.low, ci.high), abs=TOL
        )
        assert row["oracle_all"] == pytest.approx(100 * oracle_all.mean(), abs=TOL)
        # AP §13: the all-action oracle's headroom is over raw retrieval, not the best single policy.
        assert row["gap_all"] == pytest.approx(100 * (oracle_all.mean() - f1["b1"].mean()), abs=TOL)


def test_question_blind_containment_cells(fixture):
    _, records, tables = fixture
    (row,) = _rows(tables["au_blind"])
    c1 = [r for r in records if r.cell == "C1"]
    with_q = 100 * np.mean([_has(r.contexts["b2"], r.gold) for r in c1])
    blind = 100 * np.mean([_has(r.contexts["b2_blind"], r.gold) for r in c1])
    assert (row["cell"], row["baseline"], row["n"]) == ("C1", "b2", 40)
    assert (row["with_question"], row["blind"], row["delta"]) == pytest.approx((with_q, blind, blind - with_q), abs=TOL)


def test_selecting_one_cell_and_an_empty_warehouse(fixture, tmp_path):
    path, _, _ = fixture
    with open_readonly(path) as con:
        tables = {t.name: t for t in build_report(con, "audit", ["audit-C2"], db_path=path)}
    assert {r[0] for r in tables["au_t1"].rows} == {"C2"}
    assert tables["au_blind"].not_applicable and "_blind" in tables["au_blind"].not_applicable
    result = CliRunner().invoke(main, ["report", "audit", "--runs", "no-such-audit", "--db", str(path)])
    assert result.exit_code == 0, result.output
    # every table: the ten paper tables and the insertion, identity and alias checks
    assert result.output.count("_Does not apply:") == 13 and "Traceback" not in result.output
