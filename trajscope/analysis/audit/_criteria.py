"""The sentinel equivalence criteria of the audit paper: C2a (sentinel panel) and C2b (placebo)."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ._bootstrap import Estimate

# Thresholds in F1 points, as the paper states them.
C2A_ABSOLUTE_PTS = 1.0
C2A_RELATIVE = 0.20
C2A_PASSING_SHARE = 0.75  # ">= 3/4 alternative sentinels"
C2B_RELATIVE = 0.50


@dataclass(frozen=True)
class CriterionResult:
    """A pass / fail verdict and the rule that decided it."""

    passed: bool
    reason: str


def c2a_sentinel(delta_vs_mask: Estimate, mask_effect_pts: float) -> CriterionResult:
    """One alternative sentinel passes when its paired delta against [MASK] has a CI containing zero,
    or |delta| < 1.0 F1, or |delta| < 0.20 x the original [MASK]-vs-B2 effect on the same stratum."""
    magnitude = abs(delta_vs_mask.mean)
    if delta_vs_mask.ci_contains_zero:
        return CriterionResult(True, "CI contains 0")
    if magnitude < C2A_ABSOLUTE_PTS:
        return CriterionResult(True, f"|delta| < {C2A_ABSOLUTE_PTS:g} F1")
    if magnitude < C2A_RELATIVE * abs(mask_effect_pts):
        return CriterionResult(True, f"|delta| < {C2A_RELATIVE:g} x [MASK] effect")
    return CriterionResult(False, "differs from [MASK]")


def c2a_verdict(sentinel_results: Sequence[CriterionResult]) -> CriterionResult:
    """The audit passes when at least 3/4 of the alternative sentinels pass;
    otherwise the [MASK] residual is sentinel-fragile."""
    if not sentinel_results:
        return CriterionResult(False, "no alternative sentinels")
    passing = sum(r.passed for r in sentinel_results)
    total = len(sentinel_results)
    if passing >= C2A_PASSING_SHARE * total:
        return CriterionResult(True, f"{passing}/{total} alternatives pass: sentinel-robust")
    return CriterionResult(False, f"{passing}/{total} alternatives pass: sentinel-fragile")


def c2b_placebo(placebo_delta: Estimate, mask_effect_pts: float) -> CriterionResult:
    """Passes when the B2-vs-placebo paired delta has a CI containing zero or |delta| < 0.50 x the original effect."""
    if placebo_delta.ci_contains_zero:
        return CriterionResult(True, "CI contains 0")
    if abs(placebo_delta.mean) < C2B_RELATIVE * abs(mask_effect_pts):
        return CriterionResult(True, f"|delta| < {C2B_RELATIVE:g} x [MASK] effect")
    return CriterionResult(False, "placebo collapse is not answer-specific")


__all__ = [
    "C2A_ABSOLUTE_PTS", "C2A_PASSING_SHARE", "C2A_RELATIVE", "C2B_RELATIVE", "CriterionResult",
    "c2a_sentinel", "c2a_verdict", "c2b_placebo",
]
