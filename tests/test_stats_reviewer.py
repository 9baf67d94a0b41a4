"""Reviewer-level statistics against statsmodels and independent recomputations."""
from __future__ import annotations

import math
import statistics

import numpy as np
import pytest
import statsmodels.api as sm
from statsmodels.stats.contingency_tables import Table2x2, mcnemar
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.power import NormalIndPower

from trajscope.analysis.stats import (
    adjust_p_values,
    cluster_bootstrap_delta,
    exact_mcnemar_power,
    judge_error_rates,
    minimum_detectable_effect,
    odds_ratio,
    ols_cluster,
    paired_power,
    plan_comparisons,
    pooled_mcnemar,
    rogan_gladen,
    simulated_mcnemar_power,
)


@pytest.mark.parametrize("method", ["holm", "fdr_bh"])
@pytest.mark.parametrize("seed", range(5))
def test_corrections_equal_statsmodels_multipletests(method, seed):
    rng = np.random.default_rng(seed)
    p = np.concatenate([rng.uniform(0, 0.05, 6), rng.uniform(0, 1, 14), [0.01, 0.01, 1.0]])
    ours = adjust_p_values(p, method, alpha=0.05)
    reject, corrected, _, _ = multipletests(p, alpha=0.05, method=method)
    np.testing.assert_allclose(ours.adjusted, corrected, rtol=0, atol=1e-9)
    assert ours.reject.tolist() == reject.tolist()


def test_corrections_keep_missing_p_values_out_of_the_family():
    p = [0.01, float("nan"), 0.04]
    ours = adjust_p_values(p, "holm")
    assert math.isnan(ours.adjusted[1]) and not ours.reject[1]
    np.testing.assert_allclose(ours.adjusted[[0, 2]], multipletests([0.01, 0.04], method="holm")[1], atol=1e-12)
    with pytest.raises(ValueError, match="unknown correction"):
        adjust_p_values(p, "bonf")


@pytest.mark.parametrize("seed", range(4))
def test_cluster_ols_equals_statsmodels(seed):
    rng = np.random.default_rng(seed)
    n_q = 60
    qid = np.repeat([f"q{i}" for i in range(n_q)], 3)
    setting = np.tile([0, 1, 2], n_q)
    log_len = rng.normal(5, 1, qid.size)
    ans_in = rng.random(qid.size) < 0.7
    y = 0.2 + 0.3 * ans_in + 0.02 * log_len + 0.05 * (setting == 1) + rng.normal(0, 0.2, qid.size) \
        + np.repeat(rng.normal(0, 0.1, n_q), 3)
    x = np.column_stack([np.ones(qid.size), setting == 1, setting == 2, log_len, ans_in,
                         (setting == 1) * log_len, (setting == 2) * log_len]).astype(float)
    names = ["const", "s1", "s2", "log_len", "ans_in", "s1:log_len", "s2:log_len"]
    ours = ols_cluster(y, x, qid, names)
    groups = np.unique(qid, return_inverse=True)[1]
    fit = sm.OLS(y, x).fit(cov_type="cluster", cov_kwds={"groups": groups})
    np.testing.assert_allclose(ours.coef, fit.params, rtol=0, atol=1e-9)
    np.testing.assert_allclose(ours.se, fit.bse, rtol=0, atol=1e-9)
    np.testing.assert_allclose(ours.p, fit.pvalues, rtol=0, atol=1e-9)
    low, high = ours.ci()
    np.testing.assert_allclose(np.column_stack([low, high]), fit.conf_int(), rtol=0, atol=1e-9)
    assert ours.r_squared == pytest.approx(fit.rsquared, abs=1e-9)
    assert ours.n_clusters == n_q


def test_cluster_bootstrap_agrees_with_an_independent_resampling():
    rng = np.random.default_rng(7)
    n_q, n_seeds = 150, 3
    # Seeds of one question mostly agree (near-deterministic questions), so pairs cluster.
    ability_a = rng.choice([0.03, 0.97], n_q)
    ability_b = np.where(rng.random(n_q) < 0.15, 0.97, ability_a)
    qid = np.repeat(np.arange(n_q), n_seeds)
    a = (rng.random(qid.size) < np.repeat(ability_a, n_seeds)).astype(float)
    b = (rng.random(qid.size) < np.repeat(ability_b, n_seeds)).astype(float)
    ours = cluster_bootstrap_delta(qid, a, b, n_resamples=4000, seed=3)
    # Independent: a plain loop that draws questions and stacks all their seeds' pairs.
    other = np.random.default_rng(11)
    diffs_by_q = [(b - a)[qid == q] for q in range(n_q)]
    means = []
    for _ in range(4000):
        drawn = other.integers(0, n_q, n_q)
        means.append(np.concatenate([diffs_by_q[q] for q in drawn]).mean())
    low, high = np.quantile(means, [0.025, 0.975])
    assert ours.delta == pytest.approx((b - a).mean(), abs=1e-12)
    se = np.std(means)
    # Monte Carlo error of a 2.5% quantile from 4,000 draws is a small fraction of the bootstrap SD.
    assert abs(ours.low - low) < 0.15 * se and abs(ours.high - high) < 0.15 * se
    # Ignoring the clusters (every pair independent) gives a narrower, wrong interval.
    naive = np.random.default_rng(5).choice(b - a, size=(4000, qid.size)).mean(axis=1)
    assert np.std(naive) < se


def test_pooled_mcnemar_sums_the_seeds_discordant_cells():
    pooled = pooled_mcnemar([(3, 9), (5, 8), (2, 6)])
    table = np.array([[50, 10], [23, 17]])
    assert (pooled.result.a_only, pooled.result.b_only) == (10, 23)
    assert pooled.result.exact_p == pytest.approx(mcnemar(table, exact=True).pvalue, abs=1e-12)
    assert pooled.result.chi2_p == pytest.approx(mcnemar(table, exact=False, correction=True).pvalue, abs=1e-12)


def test_odds_ratio_equals_statsmodels_table2x2():
    table = np.array([[30, 70], [20, 80]])
    ours = odds_ratio(table)
    ref = Table2x2(table)
    assert ours.odds_ratio == pytest.approx(ref.oddsratio, abs=1e-12)
    np.testing.assert_allclose([ours.ci_low, ours.ci_high], ref.oddsratio_confint(), atol=1e-12)
    empty = odds_ratio(np.array([[0, 10], [5, 5]]))
    assert math.isnan(empty.ci_low) and math.isnan(empty.ci_high)


def _connor(delta: float, n: int, psi: float, alpha: float) -> float:
    """Connor (1987), eq. 3, two-sided, written out with the error function (no scipy)."""
    z = statistics.NormalDist().inv_cdf(1 - alpha / 2)
    phi = statistics.NormalDist().cdf
    sd = math.sqrt(psi - delta**2)
    return phi((abs(delta) * math.sqrt(n) - z * math.sqrt(psi)) / sd) + phi(
        (-abs(delta) * math.sqrt(n) - z * math.sqrt(psi)) / sd)


@pytest.mark.parametrize("delta,n,psi", [(0.05, 500, 0.2), (0.1, 100, 0.3), (-0.03, 2000, 0.1)])
def test_paired_power_is_connors_formula(delta, n, psi):
    assert paired_power(delta, n, psi) == pytest.approx(_connor(delta, n, psi, 0.05), abs=1e-9)


def test_connor_critical_value_uses_the_null_variance():
    """A reviewer's example: n = 300, delta = 0.1, psi = 0.3, alpha = 0.01. The alternative's variance for
    the critical value (statsmodels' one-sample NormalIndPower) gives 0.739, Connor 0.725, the exact
    McNemar test about 0.69."""
    wrong = NormalIndPower().power(0.1 / math.sqrt(0.3 - 0.01), nobs1=300, alpha=0.01, ratio=0)
    assert wrong == pytest.approx(0.739, abs=5e-4)
    assert paired_power(0.1, 300, 0.3, alpha=0.01) == pytest.approx(0.725, abs=5e-4)
    assert paired_power(0.1, 300, 0.3, alpha=0.01) == pytest.approx(_connor(0.1, 300, 0.3, 0.01), abs=1e-12)
    exact = exact_mcnemar_power(0.1, 300, 0.3, alpha=0.01)
    simulated = simulated_mcnemar_power(0.1, 300, 0.3, alpha=0.01, simulations=20_000)
    assert abs(exact - simulated) < 4 * math.sqrt(exact * (1 - exact) / 20_000)
    assert exact == pytest.approx(0.69, abs=0.01)


def test_exact_mcnemar_power_equals_enumeration_with_statsmodels_p_values():
    """Enumerate every (A-only, B-only, concordant) count of a small study, each with its multinomial
    probability, and sum those whose statsmodels exact McNemar p-value is below alpha."""
    n, psi, delta, alpha = 40, 0.4, 0.2, 0.05
    p_b, p_a = (psi + delta) / 2, (psi - delta) / 2
    expected = 0.0
    for b in range(n + 1):
        for a in range(n + 1 - b):
            p_value = mcnemar(np.array([[0, a], [b, 0]]), exact=True).pvalue if a + b else 1.0
            if p_value < alpha:
                expected += (math.comb(n, b) * math.comb(n - b, a) * p_b**b * p_a**a
                             * (1 - psi) ** (n - a - b))
    assert exact_mcnemar_power(delta, n, psi, alpha=alpha) == pytest.approx(expected, abs=1e-12)


def test_mde_reaches_the_target_power_and_simulation_agrees():
    mde = minimum_detectable_effect(1000, 0.2, power=0.8)
    assert _connor(mde, 1000, 0.2, 0.05) == pytest.approx(0.8, abs=1e-9)
    # Exact McNemar power at the MDE by simulation, checked against simulating full paired outcomes.
    simulated = simulated_mcnemar_power(mde, 1000, 0.2, simulations=4000)
    rng = np.random.default_rng(99)
    hits = 0
    for _ in range(2000):
        u = rng.random(1000)
        b_wins = int((u < (0.2 + mde) / 2).sum())
        a_wins = int(((u >= (0.2 + mde) / 2) & (u < 0.2)).sum())
        hits += mcnemar(np.array([[0, a_wins], [b_wins, 0]]), exact=True).pvalue < 0.05
    independent = hits / 2000
    mc_error = math.sqrt(0.8 * 0.2 * (1 / 4000 + 1 / 2000))
    assert abs(simulated - independent) < 4 * mc_error
    # The exact test is a little more conservative than the normal approximation, never far off.
    assert abs(simulated - 0.8) < 0.06


def test_plan_divides_alpha_over_the_family():
    plans = plan_comparisons([("a", "b", 500), ("a", "c", 500)], discordance=0.2, effect=0.05)
    assert [p.alpha for p in plans] == [0.025, 0.025]
    assert plans[0].mde == pytest.approx(minimum_detectable_effect(500, 0.2, alpha=0.025), abs=1e-12)
    assert plans[0].power_normal == pytest.approx(paired_power(0.05, 500, 0.2, alpha=0.025), abs=1e-12)


def test_rogan_gladen_corrects_a_known_judge():
    human = np.array([True] * 80 + [False] * 40)
    judge = np.concatenate([np.ones(72, bool), np.zeros(8, bool), np.ones(4, bool), np.zeros(36, bool)])
    rates = judge_error_rates(judge, human)
    assert (rates.sensitivity, rates.specificity) == (0.9, 0.9)
    observed = np.array([True] * 600 + [False] * 400)
    result = rogan_gladen(observed, rates)
    expected = (0.6 + 0.9 - 1) / (0.9 + 0.9 - 1)
    assert result.corrected == pytest.approx(expected, abs=1e-12)
    var = (0.6 * 0.4 / 1000 + expected**2 * 0.09 / 80 + (1 - expected) ** 2 * 0.09 / 40) / 0.8**2
    assert result.high - result.corrected == pytest.approx(1.959963984540054 * math.sqrt(var), abs=1e-9)
    with pytest.raises(ValueError, match="no better than chance"):
        rogan_gladen(observed, judge_error_rates(~judge, human))


def test_run_plan_prints_mde_and_power_and_runs_nothing(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from trajscope.cli import main

    matrix = tmp_path / "m.yaml"
    matrix.write_text("dataset: demo\nn: 400\nmodel: local\nruns:\n  - controller: read_gate\n    condition: baseline\n"
                      "  - controller: read_gate\n    condition: read_gate\n  - controller: read_gate\n"
                      "    condition: context_injection\n")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["run", "--matrix", str(matrix), "--plan", "--plan-discordance", "0.25"])
    assert result.exit_code == 0, result.output
    mde = minimum_detectable_effect(400, 0.25, alpha=0.025, power=0.8)
    power = paired_power(0.05, 400, 0.25, alpha=0.025)
    lines = [line for line in result.output.splitlines() if line.startswith("  demo-read_gate-")]
    assert len(lines) == 2
    for line in lines:
        fields = line.split()
        assert float(fields[1]) == pytest.approx(100 * mde, abs=0.005)
        assert float(fields[3]) == pytest.approx(power, abs=0.0005)
        assert float(fields[4]) == pytest.approx(exact_mcnemar_power(0.05, 400, 0.25, alpha=0.025), abs=0.0005)
        assert float(fields[5]) == pytest.approx(simulated_mcnemar_power(0.05, 400, 0.25, alpha=0.025), abs=0.00051)
    assert not (tmp_path / "runs").exists() and not (tmp_path / "trajscope.duckdb").exists()
    refused = CliRunner().invoke(main, ["run", "--dataset", "demo", "--controller", "read_gate", "--plan"])
    assert refused.exit_code != 0 and "--plan needs --matrix" in refused.output
