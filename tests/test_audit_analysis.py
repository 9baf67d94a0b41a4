"""Audit analysis on records with known F1s: buckets, the causal delta, C2a / C2b, identity, alias rules, bootstrap."""
from __future__ import annotations

import math
import random
import re

import numpy as np
import pytest
from scipy import stats

from trajscope.analysis.audit import (
    Estimate,
    alias_check,
    bucket_counts,
    c2a_sentinel,
    c2a_verdict,
    c2b_placebo,
    causal_effects,
    cells,
    identity_check,
    insertion_effects,
    intervention_effects,
    paired_bootstrap,
    sentinel_audit,
)
from trajscope.format import AuditRecord, ReaderOutput
from trajscope.warehouse import open_readonly
from trajscope.warehouse.audit import load_audit_records

PANEL = {"MASK": "[MASK]", "REMOVED": "[REMOVED]", "NATURAL": "the answer was removed", "WORD": "thing",
         "SYMBOL": "###"}
# F1 added to the [MASK] F1 per record for each alternative sentinel: decides which C2a rule applies.
SENTINEL_SHIFT = {"REMOVED": 0.0, "NATURAL": 0.005, "WORD": 0.05, "SYMBOL": 0.2}


def _record(qid: str, gold: str, b1: str, b2: str, f1: dict, *, cell: str = "C", error_on: str | None = None,
            masked_context: bool = True) -> AuditRecord:
    outputs = [ReaderOutput(baseline="b1", answer="x", f1=f1["b1"]),
               ReaderOutput(baseline="b2", answer="x", f1=f1["b2"])]
    for key, value in f1.items():
        if key in ("b1", "b2"):
            continue
        intervention, _, label = key.partition(":")
        sentinel = PANEL[label] if label else None
        context = None
        if intervention == "remove" and masked_context:
            context = re.sub(re.escape(gold), sentinel, b2, flags=re.IGNORECASE)
        outputs.append(ReaderOutput(baseline="b2", intervention=intervention, sentinel=sentinel, answer=str(value),
                                    f1=value, context=context,
                                    error="timeout" if error_on == key else None))
    return AuditRecord(audit_id=f"audit-{cell}", cell=cell, question_id=qid, question=f"{qid}?", gold=gold,
                       contexts={"b1": b1, "b2": b2}, outputs=outputs)


def _with_panel(mask_f1: float) -> dict[str, float]:
    values = {"remove:MASK": mask_f1}
    values.update({f"remove:{label}": mask_f1 + shift for label, shift in SENTINEL_SHIFT.items()})
    return values


RECORDS = [
    # 1->1
    _record("r1", "Oskar Bay", "born in Oskar Bay", "Ada was born in oskar bay.",
            {"b1": 0.2, "b2": 0.9, **_with_panel(0.1), "placebo:MASK": 0.8}),
    _record("r2", "Dunmere", "held in Dunmere", "The fair is in DUNMERE harbour.",
            {"b1": 0.5, "b2": 0.7, **_with_panel(0.3), "placebo:MASK": 0.7}),
    # 0->1
    _record("r3", "Mirek Sol", "no leader named", "Its guild was led by Mirek Sol.",
            {"b1": 0.0, "b2": 0.5, **_with_panel(0.0), "placebo:MASK": 0.5}),
    # 0->0
    _record("r4", "Mirek Sol", "copper mines", "Tessaly has copper mines.",
            {"b1": 0.0, "b2": 0.1, "insert_prepend": 0.6, "insert_mid": 0.0, "identity": 0.0}),
    # 1->0
    _record("r5", "Ada Brenn", "founded by Ada Brenn", "A cartographer founded it.",
            {"b1": 1.0, "b2": 0.4, "insert_prepend": 1.0, "insert_mid": 0.4, "identity": 0.4}),
    # excluded: a one-character gold
    AuditRecord(audit_id="audit-C", cell="C", question_id="r6", question="r6?", gold="B"),
    # failed: one reader call errored, so the record is never paired
    _record("r7", "Vellmar", "Vellmar town", "Vellmar is a town.",
            {"b1": 1.0, "b2": 1.0, "remove:MASK": 0.0, "placebo:MASK": 1.0}, error_on="placebo:MASK"),
]


@pytest.fixture(scope="module")
def con(tmp_path_factory):
    db = tmp_path_factory.mktemp("audit") / "w.duckdb"
    load_audit_records(db, RECORDS)
    with open_readonly(db) as connection:
        yield connection


def test_flags_and_buckets_per_record(con):
    rows = con.execute("""SELECT question_id, ans_in_b1, ans_in_compile, bucket, analysable FROM audit_buckets
                          ORDER BY question_id""").fetchall()
    assert rows == [("r1", True, True, "1->1", True), ("r2", True, True, "1->1", True),
                    ("r3", False, True, "0->1", True), ("r4", False, False, "0->0", True),
                    ("r5", True, False, "1->0", True), ("r7", True, True, "1->1", False)]
    counts = bucket_counts(con).row(0, named=True)
    assert counts == {"cell": "C", "baseline": "b2", "n": 5, "n_0_0": 1, "n_0_1": 1, "n_1_1": 2, "n_1_0": 1,
                      "ans_in_b1_rate": pytest.approx(0.6), "ans_in_compile_rate": pytest.approx(0.6)}


def test_cells_count_exclusions_and_failures(con):
    row = cells(con).row(0, named=True)
    assert (row["n_records"], row["n_excluded_short_gold"], row["n_failed"], row["n_analysable"]) == (7, 1, 1, 5)


def test_causal_delta_arithmetic_on_the_1_to_1_stratum(con):
    row = causal_effects(con).row(0, named=True)
    # r1: remove 0.1 - 0.9 = -0.8, placebo 0.8 - 0.9 = -0.1; r2: remove 0.3 - 0.7 = -0.4, placebo 0.0
    assert row["n"] == 2
    assert row["delta_remove_pts"] == pytest.approx(-60.0)
    assert row["delta_placebo_pts"] == pytest.approx(-5.0)
    assert row["delta_causal_pts"] == pytest.approx(-55.0)
    assert row["delta_causal_pts"] == pytest.approx(row["delta_remove_pts"] - row["delta_placebo_pts"])
    assert row["delta_causal_low"] <= row["delta_causal_pts"] <= row["delta_causal_high"]
    # r3 (0->1) and the failed r7 stay out of the 1->1 contrast
    ids = [r[0] for r in con.execute("SELECT question_id FROM audit_causal_pairs ORDER BY 1").fetchall()]
    assert ids == ["r1", "r2"]


def test_intervention_effects_pair_each_output_with_its_unperturbed_context(con):
    effects = intervention_effects(con)
    remove_all = effects.filter((effects["intervention"] == "remove") & (effects["sentinel"] == "MASK")
                                & (effects["stratum"] == "all")).row(0, named=True)
    deltas = [0.1 - 0.9, 0.3 - 0.7, 0.0 - 0.5]
    expected = paired_bootstrap(deltas).scaled(100)
    assert remove_all["n"] == 3
    assert remove_all["f1_pts"] == pytest.approx(100 * (0.1 + 0.3 + 0.0) / 3)
    assert remove_all["f1_base_pts"] == pytest.approx(100 * (0.9 + 0.7 + 0.5) / 3)
    assert (remove_all["delta_pts"], remove_all["delta_low"], remove_all["delta_high"]) == pytest.approx(
        (expected.mean, expected.low, expected.high))
    # inserts apply only where ans_in_compile = 0, removes only where it is 1
    assert set(effects.filter(effects["intervention"] == "insert_prepend")["stratum"]) == {"0->0", "1->0", "all"}
    assert set(effects.filter(effects["intervention"] == "placebo")["stratum"]) == {"0->1", "1->1", "all"}


def test_insertion_on_the_0_to_0_bucket(con):
    row = insertion_effects(con).row(0, named=True)
    assert row["n"] == 1
    assert row["prepend_pts"] == pytest.approx(50.0)
    assert row["mid_pts"] == pytest.approx(-10.0)


def test_identity_check_reports_rerun_drift(con):
    row = identity_check(con).row(0, named=True)
    # r4 rerun 0.0 vs 0.1; r5 rerun 0.4 vs 0.4
    assert row["n"] == 2
    assert row["median_abs_delta_pts"] == pytest.approx(5.0)
    assert row["mean_delta_pts"] == pytest.approx(-5.0)


def test_sentinel_panel_c2a_rules_and_verdicts(con):
    per_sentinel, verdicts = sentinel_audit(con)
    rows = {r["sentinel"]: r for r in per_sentinel.iter_rows(named=True)}
    assert list(rows) == ["MASK", "NATURAL", "REMOVED", "SYMBOL", "WORD"]
    assert rows["MASK"]["c2a_reason"] == "reference"
    assert rows["REMOVED"]["vs_mask_pts"] == pytest.approx(0.0)
    assert (rows["REMOVED"]["c2a_pass"], rows["REMOVED"]["c2a_reason"]) == (True, "CI contains 0")
    assert rows["NATURAL"]["vs_mask_pts"] == pytest.approx(0.5)
    assert (rows["NATURAL"]["c2a_pass"], rows["NATURAL"]["c2a_reason"]) == (True, "|delta| < 1 F1")
    assert rows["WORD"]["vs_mask_pts"] == pytest.approx(5.0)
    assert (rows["WORD"]["c2a_pass"], rows["WORD"]["c2a_reason"]) == (True, "|delta| < 0.2 x [MASK] effect")
    assert rows["SYMBOL"]["vs_mask_pts"] == pytest.approx(20.0)
    assert rows["SYMBOL"]["c2a_pass"] is False
    # residual of [MASK] vs raw retrieval: (0.1-0.2, 0.3-0.5, 0.0-0.0) / 3
    assert rows["MASK"]["residual_vs_b1_pts"] == pytest.approx(-10.0)
    verdict = verdicts.row(0, named=True)
    assert verdict["mask_effect_pts"] == pytest.approx(100 * (-0.8 - 0.4 - 0.5) / 3)
    assert (verdict["alternatives_passing"], verdict["alternatives"], verdict["c2a_pass"]) == (3, 4, True)
    assert verdict["placebo_pts"] == pytest.approx(100 * (-0.1 + 0.0 + 0.0) / 3)
    assert verdict["c2b_pass"] is True


def _est(mean: float, low: float, high: float) -> Estimate:
    return Estimate(100, mean, low, high)


def test_c2a_rules_at_their_boundaries():
    effect = -30.0
    assert c2a_sentinel(_est(4.0, 0.0, 8.0), effect).reason == "CI contains 0"
    assert c2a_sentinel(_est(0.99, 0.5, 1.5), effect).passed
    assert c2a_sentinel(_est(5.99, 5.0, 7.0), effect).passed          # 5.99 < 0.2 x 30
    assert not c2a_sentinel(_est(6.0, 5.0, 7.0), effect).passed       # exactly 0.2 x 30 is not below it
    assert not c2a_sentinel(_est(-7.81, -10.0, -5.0), 4.12).passed    # the paper's 2Wiki pattern
    verdicts = [c2a_sentinel(_est(v, v - 1, v + 1), effect) for v in (1.5, 2.0, 9.0, 12.0)]
    assert [v.passed for v in verdicts] == [True, True, False, False]
    assert c2a_verdict(verdicts).passed is False
    assert c2a_verdict(verdicts).reason == "2/4 alternatives pass: sentinel-fragile"
    assert c2a_verdict(verdicts[:2] + [verdicts[0]] + verdicts[2:3]).passed is True  # 3/4


def test_c2b_rules():
    assert c2b_placebo(_est(-3.0, -6.0, 0.0), -30.0).passed                # CI touches 0
    assert c2b_placebo(_est(-14.9, -18.0, -12.0), -30.0).passed            # |delta| < 0.5 x 30
    assert not c2b_placebo(_est(-15.0, -18.0, -12.0), -30.0).passed


ALIAS_RECORDS = [
    _record("a1", "the United States", "x", "He moved to the United States. Later United States law changed.",
            {"b1": 0.0, "b2": 1.0, "remove:MASK": 0.5, "placebo:MASK": 1.0}, cell="A"),
    _record("a2", "Ridley Scott", "x", "Directed by Ridley Scott. Scott won.",
            {"b1": 0.0, "b2": 1.0, "remove:MASK": 0.5, "placebo:MASK": 1.0}, cell="A", masked_context=False),
    _record("a3", "National Basketball Association", "x",
            "He played in the National Basketball Association; NBA rules applied.",
            {"b1": 0.2, "b2": 1.0, "remove:MASK": 0.2, "placebo:MASK": 1.0}, cell="A"),
    _record("a4", "June 12, 1987", "x", "Born on June 12, 1987. In 1987 he moved.",
            {"b1": 0.0, "b2": 1.0, "remove:MASK": 0.5, "placebo:MASK": 1.0}, cell="A"),
    _record("a5", "Big Ben", "x", "Big Ben rings. BB for short.",
            {"b1": 0.1, "b2": 1.0, "remove:MASK": 0.3, "placebo:MASK": 1.0}, cell="A"),
    _record("a6", "Paris", "x", "It is Paris. Parisians agree.",
            {"b1": 0.4, "b2": 1.0, "remove:MASK": 0.9, "placebo:MASK": 1.0}, cell="A"),
]


def test_alias_spot_check_variants_and_fires(tmp_path):
    db = tmp_path / "alias.duckdb"
    load_audit_records(db, ALIAS_RECORDS)
    with open_readonly(db) as con:
        rows = con.execute("""SELECT question_id, variant_the, variant_last_token, variant_acronym, variant_year,
                                     fired_the, fired_last_token, fired_acronym, fired_year, flagged
                              FROM audit_alias_check ORDER BY question_id""").fetchall()
        summary = alias_check(con).row(0, named=True)
    assert rows == [
        ("a1", "united states", "states", None, None, True, True, False, False, True),
        ("a2", None, "scott", None, None, False, True, False, False, True),   # context re-derived in SQL
        ("a3", None, "association", "nba", None, False, False, True, False, True),
        ("a4", None, "1987", None, "1987", False, True, False, True, True),
        ("a5", None, "ben", None, None, False, False, False, False, False),   # "bb" is under 3 characters
        ("a6", None, None, None, None, False, False, False, False, False),    # one word: no variants
    ]
    assert (summary["n"], summary["n_flagged"]) == (6, 4)
    assert summary["flagged_rate"] == pytest.approx(4 / 6)
    # clean subset a5, a6: masked - B1 = 0.2 and 0.5
    assert summary["lift_clean_pts"] == pytest.approx(35.0)
    assert summary["lift_flagged_pts"] == pytest.approx(100 * (0.5 + 0.5 + 0.0 + 0.5) / 4)


def test_bootstrap_matches_an_independent_resampling_within_monte_carlo_error():
    rng = np.random.default_rng(7)
    deltas = rng.normal(-0.3, 0.4, size=150).clip(-1, 1)
    ours = paired_bootstrap(deltas)
    assert ours.n == 150 and ours.mean == pytest.approx(deltas.mean())
    assert paired_bootstrap(deltas) == ours  # seed 42: reproducible
    se = deltas.std(ddof=1) / math.sqrt(len(deltas))
    reference = stats.bootstrap((deltas,), np.mean, n_resamples=20000, confidence_level=0.95,
                                method="percentile", random_state=np.random.default_rng(123))
    # the 2.5% quantile of 1,000 resampled means has a Monte Carlo SD of about 0.09 SE
    assert abs(ours.low - reference.confidence_interval.low) < 0.4 * se
    assert abs(ours.high - reference.confidence_interval.high) < 0.4 * se
    # and a plain-Python resampler with its own generator agrees as well
    draw = random.Random(2024)
    values = deltas.tolist()
    means = sorted(sum(draw.choice(values) for _ in values) / len(values) for _ in range(4000))
    assert abs(ours.low - means[int(0.025 * 4000)]) < 0.4 * se
    assert abs(ours.high - means[int(0.975 * 4000) - 1]) < 0.4 * se


def test_bootstrap_of_nothing_is_nan_and_of_a_constant_is_a_point():
    empty = paired_bootstrap([])
    assert empty.n == 0 and math.isnan(empty.mean) and not empty.ci_contains_zero
    assert paired_bootstrap([0.25] * 9) == Estimate(9, 0.25, 0.25, 0.25)


PARITY = [  # (gold, compiled context): the SQL flag must equal the engine's has_answer on each
    ("Washington D.C.", "He lived in washington d.c. for years."),
    ("Washington D.C.", "He lived in WashingtonXDXCX for years."),
    ("C++ (language)", "Written in c++ (LANGUAGE) mostly."),
    ("Émile Zola", "A novel by ÉMILE ZOLA."),
    ("  Oskar Bay ", "The OSKAR BAY port."),
    ("a|b", "contains ab only"),
]


def test_sql_presence_flags_agree_with_the_engine(tmp_path):
    from trajscope.engine.audit import has_answer

    records = [
        AuditRecord(audit_id="p", question_id=f"p{i}", question="?", gold=gold,
                    contexts={"b1": "nothing", "b2": context},
                    outputs=[ReaderOutput(baseline="b1", f1=0.0), ReaderOutput(baseline="b2", f1=0.0)])
        for i, (gold, context) in enumerate(PARITY)
    ]
    db = tmp_path / "parity.duckdb"
    load_audit_records(db, records)
    with open_readonly(db) as con:
        flags = dict(con.execute("SELECT question_id, ans_in_compile FROM audit_buckets").fetchall())
    expected = {f"p{i}": has_answer(context, gold) for i, (gold, context) in enumerate(PARITY)}
    assert expected == {"p0": True, "p1": False, "p2": True, "p3": True, "p4": True, "p5": False}
    assert flags == expected


def test_pipeline_f1_per_suite_and_setting_is_the_unperturbed_mean(con):
    # AP Table 3: independently, from the records above (r6 excluded for its gold, r7 for its failed call).
    analysable = [r for r in RECORDS if len(r.gold.strip()) >= 2 and not any(o.error for o in r.outputs)]
    expected = {b: [o.f1 for r in analysable for o in r.outputs if o.baseline == b and o.intervention == "none"]
                for b in ("b1", "b2")}
    rows = con.execute("SELECT cell, baseline, n, f1_points, lift_over_b1_points FROM audit_pipeline_f1").fetchall()
    assert [(c, b, n) for c, b, n, *_ in rows] == [("C", "b1", 5), ("C", "b2", 5)]
    for _, baseline, _, f1, lift in rows:
        assert f1 == pytest.approx(100 * sum(expected[baseline]) / 5)
        assert lift == pytest.approx(100 * (sum(expected[baseline]) - sum(expected["b1"])) / 5)
