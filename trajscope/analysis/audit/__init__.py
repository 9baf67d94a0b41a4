"""The answer-presence audit's estimates over the warehouse's audit views: bootstrap CIs, C2a / C2b verdicts (its
tables: analysis.report.audit_tables)."""
from ._analysis import (
    alias_check,
    bucket_counts,
    causal_effects,
    cells,
    identity_check,
    insertion_effects,
    intervention_effects,
    sentinel_audit,
)
from ._bootstrap import CONFIDENCE, N_RESAMPLES, SEED, Estimate, bootstrap_means, paired_bootstrap
from ._criteria import (
    C2A_ABSOLUTE_PTS,
    C2A_PASSING_SHARE,
    C2A_RELATIVE,
    C2B_RELATIVE,
    CriterionResult,
    c2a_sentinel,
    c2a_verdict,
    c2b_placebo,
)

__all__ = [
    "C2A_ABSOLUTE_PTS", "C2A_PASSING_SHARE", "C2A_RELATIVE", "C2B_RELATIVE", "CONFIDENCE", "N_RESAMPLES",
    "SEED", "CriterionResult", "Estimate",
    "alias_check", "bootstrap_means", "bucket_counts", "c2a_sentinel", "c2a_verdict",
    "c2b_placebo", "causal_effects", "cells", "identity_check", "insertion_effects",
    "intervention_effects", "paired_bootstrap", "sentinel_audit",
]
