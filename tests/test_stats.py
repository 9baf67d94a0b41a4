"""Every statistic against scipy / statsmodels / scikit-learn on randomised paired data."""
import numpy as np
import pytest
from scipy import stats as sps
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.contingency_tables import StratifiedTable, mcnemar
from statsmodels.stats.weightstats import ttost_paired

from trajscope.analysis.stats import (
    UnpairedComparison,
    cohen_kappa,
    mantel_haenszel,
    mcnemar_test,
    pair_outcomes,
    paired_bootstrap_delta,
    pareto_frontier,
    tost_paired,
    transition_table,
)

SEEDS = range(8)


def _paired(seed, n=None, p_a=0.55, lift=0.08):
    rng = np.random.default_rng(seed)
    n = n or int(rng.integers(30, 400))
    a = (rng.random(n) < p_a).astype(float)
    flip = rng.random(n)
    b = np.where(flip < lift, 1.0, np.where(flip < lift + 0.04, 0.0, a))
    return a, b


@pytest.mark.parametrize("seed", SEEDS)
def test_mcnemar_matches_statsmodels(seed):
    a, b = _paired(seed)
    table = transition_table([f"q{i}" for i in range(a.size)], a, b).counts
    ours = mcnemar_test(int(table[0, 1]), int(table[1, 0]))
    exact = mcnemar(table, exact=True)
    chi = mcnemar(table, exact=False, correction=True)
    assert ours.exact_p == pytest.approx(exact.pvalue, abs=1e-9)
    assert ours.chi2 == pytest.approx(chi.statistic, abs=1e-9)
    assert ours.chi2_p == pytest.approx(chi.pvalue, abs=1e-9)
    assert ours.exact_p == pytest.approx(sps.binomtest(ours.a_only, ours.a_only + ours.b_only).pvalue, abs=1e-9)


def test_mcnemar_without_discordant_pairs_is_p_one():
    result = mcnemar_test(0, 0)
    assert result.exact_p == 1.0 and result.chi2 is None and result.chi2_p == 1.0


def test_transition_table_cells_hold_question_ids():
    t = transition_table(["q1", "q2", "q3", "q4", "q5"], np.array([1, 1, 0, 0, 1]), np.array([1, 0, 1, 0, 1]))
    assert t.both_right == ["q1", "q5"]
    assert t.a_only == ["q2"]
    assert t.b_only == ["q3"]
    assert t.both_wrong == ["q4"]
    assert t.counts.tolist() == [[2, 1], [1, 1]]


@pytest.mark.parametrize("seed", SEEDS)
def test_mantel_haenszel_matches_statsmodels(seed):
    rng = np.random.default_rng(seed)
    tables = rng.integers(1, 60, size=(int(rng.integers(2, 6)), 2, 2))
    ours = mantel_haenszel(tables)
    ref = StratifiedTable(np.transpose(tables, (1, 2, 0)).astype(float))
    low, high = ref.oddsratio_pooled_confint()
    null = ref.test_null_odds(correction=False)
    assert ours.odds_ratio == pytest.approx(ref.oddsratio_pooled, abs=1e-9)
    assert ours.log_or_se == pytest.approx(ref.logodds_pooled_se, abs=1e-9)
    assert ours.ci_low == pytest.approx(low, abs=1e-9)
    assert ours.ci_high == pytest.approx(high, abs=1e-9)
    assert ours.cmh_statistic == pytest.approx(null.statistic, abs=1e-9)
    assert ours.cmh_p == pytest.approx(null.pvalue, abs=1e-9)


def test_mantel_haenszel_is_undefined_like_statsmodels_when_no_stratum_holds_both_groups():
    # Each stratum has one exposure group only (one run at each read-exposure level): 0/0.
    tables = np.array([[[0, 0], [0, 10]], [[8, 2], [0, 0]]], dtype=float)
    ours = mantel_haenszel(tables)
    with np.errstate(invalid="ignore", divide="ignore"):
        ref = StratifiedTable(np.transpose(tables, (1, 2, 0)))
        assert np.isnan(ref.oddsratio_pooled) and np.isnan(ref.test_null_odds(correction=False).pvalue)
    assert np.isnan(ours.odds_ratio) and np.isnan(ours.ci_low) and np.isnan(ours.cmh_p)


@pytest.mark.parametrize("seed", SEEDS)
def test_tost_matches_statsmodels(seed):
    a, b = _paired(seed)
    margin = 0.05 + 0.01 * seed
    ours = tost_paired(a, b, margin)
    p, (_, p1, _), (_, p2, _) = ttost_paired(b, a, -margin, margin)
    assert ours.p_lower == pytest.approx(p1, abs=1e-9)
    assert ours.p_upper == pytest.approx(p2, abs=1e-9)
    assert ours.p_value == pytest.approx(p, abs=1e-9)
    assert ours.equivalent == (p < 0.05)


def test_tost_rejects_non_positive_margin():
    with pytest.raises(ValueError, match="margin"):
        tost_paired(np.zeros(5), np.ones(5), 0.0)


@pytest.mark.parametrize("seed", SEEDS)
def test_cohen_kappa_matches_sklearn(seed):
    rng = np.random.default_rng(seed)
    x = rng.choice(["disc", "post", "retr", "amb"], size=200)
    y = np.where(rng.random(200) < 0.7, x, rng.choice(["disc", "post", "retr", "amb"], size=200))
    assert cohen_kappa(x, y).kappa == pytest.approx(cohen_kappa_score(x, y), abs=1e-9)
    xb, yb = rng.random(150) < 0.4, rng.random(150) < 0.5
    assert cohen_kappa(xb, yb).kappa == pytest.approx(cohen_kappa_score(xb, yb), abs=1e-9)


def _quantile_mc_tolerance(bootstrap_se: float, n_resamples: int) -> float:
    """Four Monte Carlo standard errors of a 2.5% sample quantile of a normal bootstrap distribution."""
    p = 0.025
    density = sps.norm.pdf(sps.norm.ppf(p)) / bootstrap_se
    return 4 * np.sqrt(p * (1 - p) / n_resamples) / density


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_bootstrap_matches_scipy_within_monte_carlo_error(seed):
    a, b = _paired(seed, n=300)
    ours = paired_bootstrap_delta(a, b)
    ref = sps.bootstrap(
        (a, b), lambda x, y, axis: np.mean(y - x, axis=axis), paired=True, vectorized=True,
        n_resamples=20000, method="percentile", confidence_level=0.95, random_state=seed,
    )
    assert ours.delta == pytest.approx(float(np.mean(b - a)), abs=1e-12)
    tolerance = _quantile_mc_tolerance(ref.standard_error, 1000) + 1 / a.size  # + one grid step
    assert abs(ours.low - ref.confidence_interval.low) < tolerance
    assert abs(ours.high - ref.confidence_interval.high) < tolerance
    assert ours.low < ours.delta < ours.high


def test_bootstrap_continuous_scores_use_index_resampling():
    rng = np.random.default_rng(5)
    a, b = rng.random(400), rng.random(400) + 0.1
    ours = paired_bootstrap_delta(a, b)
    ref = sps.bootstrap((a, b), lambda x, y, axis: np.mean(y - x, axis=axis), paired=True,
                        vectorized=True, n_resamples=20000, method="percentile", random_state=5)
    tolerance = _quantile_mc_tolerance(ref.standard_error, 1000)
    assert abs(ours.low - ref.confidence_interval.low) < tolerance
    assert abs(ours.high - ref.confidence_interval.high) < tolerance


def test_bootstrap_is_reproducible_at_the_seed():
    a, b = _paired(3, n=500)
    assert paired_bootstrap_delta(a, b) == paired_bootstrap_delta(a, b)
    assert paired_bootstrap_delta(a, b, seed=7) != paired_bootstrap_delta(a, b)


def test_pairing_aligns_by_question_id_and_labels_partial_overlap():
    paired = pair_outcomes(["q2", "q1", "q3"], [1, 0, 1], ["q1", "q2", "q4"], [1, 1, 0])
    assert paired.question_ids == ["q1", "q2"]
    assert paired.a.tolist() == [0.0, 1.0] and paired.b.tolist() == [1.0, 1.0]
    assert paired.only_a == ["q3"] and paired.only_b == ["q4"]
    assert not paired.complete
    assert "1 only in A" in paired.pairing_note()


def test_unpaired_runs_are_refused():
    with pytest.raises(UnpairedComparison, match="share no question ids"):
        pair_outcomes(["q1"], [1], ["q9"], [1])
    with pytest.raises(UnpairedComparison, match="more than once"):
        pair_outcomes(["q1", "q1"], [1, 0], ["q1"], [1])


def test_pareto_frontier_by_brute_force():
    rng = np.random.default_rng(11)
    tokens, acc = rng.integers(100, 1000, 40).astype(float), rng.random(40).round(2)
    mask = pareto_frontier(tokens, acc)
    for i in range(40):
        dominated = any(
            tokens[j] <= tokens[i] and acc[j] >= acc[i] and (tokens[j] < tokens[i] or acc[j] > acc[i])
            for j in range(40)
        )
        assert mask[i] == (not dominated)
    assert mask.any()
