"""Statistics SQL cannot express, over query results: paired bootstrap, McNemar, Mantel-Haenszel,
TOST, Cohen's kappa and the Pareto frontier. Every function takes arrays and returns a dataclass."""
from ._agreement import Agreement, cohen_kappa
from ._bootstrap import (
    DEFAULT_CONFIDENCE,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    BootstrapCI,
    bootstrap_differences,
    bootstrap_means,
    paired_bootstrap_delta,
)
from ._equivalence import TOSTResult, tost_paired
from ._mantel_haenszel import MantelHaenszelResult, mantel_haenszel
from ._mcnemar import McNemarResult, TransitionTable, mcnemar_test, transition_table
from ._paired import PairedOutcomes, UnpairedComparison, pair_outcomes
from ._pareto import pareto_frontier

__all__ = [
    "DEFAULT_CONFIDENCE", "DEFAULT_RESAMPLES", "DEFAULT_SEED",
    "Agreement", "BootstrapCI", "MantelHaenszelResult", "McNemarResult", "PairedOutcomes",
    "TOSTResult", "TransitionTable", "UnpairedComparison",
    "bootstrap_differences", "bootstrap_means", "cohen_kappa", "mantel_haenszel", "mcnemar_test", "paired_bootstrap_delta", "pair_outcomes",
    "pareto_frontier", "tost_paired", "transition_table",
]
