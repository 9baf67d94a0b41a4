"""Power and minimum detectable effect of a paired accuracy comparison, planned before a run matrix runs."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import optimize, stats

from ._bootstrap import generator

DEFAULT_ALPHA = 0.05
DEFAULT_POWER = 0.8
DEFAULT_DISCORDANCE = 0.2  # share of questions two conditions answer differently (pilot runs say more)
SIMULATIONS = 4000
SIMULATION_SEED = 42


def _check(n: int, discordance: float, alpha: float) -> None:
    if n < 1:
        raise ValueError(f"a power plan needs at least one paired question, got n = {n}")
    if not 0 < discordance <= 1:
        raise ValueError(f"the discordance rate must be in (0, 1], got {discordance}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")


def paired_power(delta: float, n: int, discordance: float, *, alpha: float = DEFAULT_ALPHA) -> float:
    """Connor's (1987) power of the two-sided McNemar z-test: the critical value under the null's variance
    discordance, the shift under the alternative's discordance - delta^2 (Biometrics 43:207-211)."""
    _check(n, discordance, alpha)
    if abs(delta) >= discordance:
        raise ValueError(f"|delta| = {abs(delta)} cannot reach the discordance rate {discordance}")
    sd_alt = np.sqrt(discordance - delta**2)
    crit = stats.norm.isf(alpha / 2) * np.sqrt(discordance)
    shift = abs(delta) * np.sqrt(n)
    return float(stats.norm.sf((crit - shift) / sd_alt) + stats.norm.cdf((-crit - shift) / sd_alt))


def exact_mcnemar_power(delta: float, n: int, discordance: float, *, alpha: float = DEFAULT_ALPHA) -> float:
    """Power of the exact McNemar test by enumeration: the sum, over every count d of discordant pairs and
    every count b of B's wins among them, of their probability where the exact p-value is below alpha."""
    _check(n, discordance, alpha)
    if abs(delta) > discordance:
        raise ValueError(f"|delta| = {abs(delta)} cannot exceed the discordance rate {discordance}")
    p_b = (discordance + delta) / (2 * discordance)
    total = 0.0
    for d in range(1, n + 1):
        b = np.arange(d + 1)
        p_value = np.minimum(1.0, 2 * stats.binom.cdf(np.minimum(b, d - b), d, 0.5))
        total += stats.binom.pmf(d, n, discordance) * stats.binom.pmf(b[p_value < alpha], d, p_b).sum()
    return float(total)


def minimum_detectable_effect(n: int, discordance: float, *, alpha: float = DEFAULT_ALPHA,
                              power: float = DEFAULT_POWER) -> float:
    """The smallest |delta| that Connor's formula (paired_power) detects with the given power (NaN when none can)."""
    _check(n, discordance, alpha)
    if not alpha < power < 1:
        raise ValueError(f"power must be in (alpha, 1), got {power}")
    upper = discordance * (1 - 1e-12)
    if paired_power(upper, n, discordance, alpha=alpha) < power:
        return float("nan")
    return float(optimize.brentq(lambda d: paired_power(d, n, discordance, alpha=alpha) - power, 0.0, upper,
                                 xtol=1e-12))


def simulated_mcnemar_power(delta: float, n: int, discordance: float, *, alpha: float = DEFAULT_ALPHA,
                            simulations: int = SIMULATIONS, seed: int = SIMULATION_SEED) -> float:
    """Power of the exact McNemar test by simulation: discordant pairs ~ Binomial(n, discordance), of which
    B wins each with probability (discordance + delta) / (2 * discordance)."""
    _check(n, discordance, alpha)
    if abs(delta) > discordance:
        raise ValueError(f"|delta| = {abs(delta)} cannot exceed the discordance rate {discordance}")
    rng = generator(seed)
    discordant = rng.binomial(n, discordance, size=simulations)
    b_wins = rng.binomial(discordant, (discordance + delta) / (2 * discordance))
    low = np.minimum(b_wins, discordant - b_wins)
    p = np.where(discordant > 0, np.minimum(1.0, 2 * stats.binom.cdf(low, np.maximum(discordant, 1), 0.5)), 1.0)
    return float((p < alpha).mean())


@dataclass(frozen=True)
class ComparisonPlan:
    """One planned paired comparison: its size, the per-test alpha after correction, MDE and power."""

    run_a: str
    run_b: str
    n: int
    alpha: float
    mde: float
    power_at: float  # the effect the power column is for
    power_normal: float  # Connor's formula
    power_mcnemar_exact: float  # by enumeration
    power_mcnemar_simulated: float


def plan_comparisons(pairs: list[tuple[str, str, int]], *, discordance: float = DEFAULT_DISCORDANCE,
                     alpha: float = DEFAULT_ALPHA, power: float = DEFAULT_POWER, effect: float = 0.05,
                     correction: str = "holm") -> list[ComparisonPlan]:
    """MDE and power of each (run A, run B, n) comparison; with Holm or Bonferroni the per-test alpha is
    the family's smallest step, alpha / m, so the plan holds whatever order the p-values come in."""
    if correction not in ("holm", "bonferroni", "none"):
        raise ValueError(f"unknown correction {correction!r}; choose holm, bonferroni or none")
    m = len(pairs)
    per_test = alpha / m if correction != "none" and m else alpha
    plans = []
    for run_a, run_b, n in pairs:
        usable = min(effect, discordance * (1 - 1e-9))
        plans.append(ComparisonPlan(
            run_a, run_b, n, per_test, minimum_detectable_effect(n, discordance, alpha=per_test, power=power),
            usable, paired_power(usable, n, discordance, alpha=per_test),
            exact_mcnemar_power(usable, n, discordance, alpha=per_test),
            simulated_mcnemar_power(usable, n, discordance, alpha=per_test)))
    return plans


__all__ = [
    "DEFAULT_ALPHA", "DEFAULT_DISCORDANCE", "DEFAULT_POWER", "ComparisonPlan", "exact_mcnemar_power",
    "minimum_detectable_effect",
    "paired_power", "plan_comparisons", "simulated_mcnemar_power",
]
