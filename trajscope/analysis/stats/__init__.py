"""Statistics SQL cannot express, over query results: paired and cluster bootstrap, McNemar (pooled over
seeds), odds ratios and Mantel-Haenszel, TOST, Cohen's kappa, Holm / Benjamini-Hochberg, cluster-robust
OLS, power planning, judge-error correction and the Pareto frontier. Functions take arrays and return
dataclasses."""
from ._agreement import Agreement, cohen_kappa
from ._bootstrap import (
    DEFAULT_CONFIDENCE,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    BootstrapCI,
    bootstrap_differences,
    bootstrap_means,
    cluster_bootstrap_delta,
    generator,
    paired_bootstrap_delta,
)
from ._cluster import PooledMcNemar, pooled_mcnemar
from ._equivalence import TOSTResult, tost_paired
from ._forks import ForkRescueStats, fork_rescue_stats, wilson_interval
from ._judge_error import CorrectedAccuracy, JudgeErrorRates, judge_error_rates, rogan_gladen
from ._mantel_haenszel import MantelHaenszelResult, mantel_haenszel
from ._mcnemar import McNemarResult, TransitionTable, mcnemar_test, transition_table
from ._multiple import METHODS as CORRECTION_METHODS
from ._multiple import AdjustedPValues, adjust_p_values
from ._odds_ratio import OddsRatio, odds_ratio
from ._ols import ClusteredOLS, ols_cluster
from ._paired import PairedOutcomes, UnpairedComparison, pair_outcomes
from ._pareto import pareto_frontier
from ._power import (
    DEFAULT_ALPHA,
    DEFAULT_DISCORDANCE,
    DEFAULT_POWER,
    ComparisonPlan,
    exact_mcnemar_power,
    minimum_detectable_effect,
    paired_power,
    plan_comparisons,
    simulated_mcnemar_power,
)

__all__ = [
    "ForkRescueStats", "fork_rescue_stats", "wilson_interval",
    "CORRECTION_METHODS", "DEFAULT_ALPHA", "DEFAULT_CONFIDENCE", "DEFAULT_DISCORDANCE", "DEFAULT_POWER",
    "DEFAULT_RESAMPLES", "DEFAULT_SEED",
    "AdjustedPValues", "Agreement", "BootstrapCI", "ClusteredOLS", "ComparisonPlan", "CorrectedAccuracy",
    "JudgeErrorRates", "MantelHaenszelResult", "McNemarResult", "OddsRatio", "PairedOutcomes",
    "PooledMcNemar", "TOSTResult", "TransitionTable", "UnpairedComparison",
    "adjust_p_values", "bootstrap_differences", "bootstrap_means", "cluster_bootstrap_delta", "cohen_kappa",
    "exact_mcnemar_power", "generator", "judge_error_rates", "mantel_haenszel", "mcnemar_test",
    "minimum_detectable_effect", "odds_ratio",
    "ols_cluster", "paired_bootstrap_delta", "pair_outcomes", "paired_power", "pareto_frontier",
    "plan_comparisons", "pooled_mcnemar", "rogan_gladen", "simulated_mcnemar_power", "tost_paired",
    "transition_table",
]
