"""Agreement of step-attribution methods with people (`trajscope agreement --human`, the Breakdowns page):
the attribution_agreement view's counts with their confidence intervals, and Cohen's kappa of categories."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from ..stats import (
    DEFAULT_CONFIDENCE,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    McNemarResult,
    cohen_kappa,
    generator,
    mcnemar_test,
    wilson_interval,
)
from ._sql import query_sql

LABELLED_RUNS_SQL = query_sql("labelled_runs")
AGREEMENT_SQL = query_sql("agreement_by_method")
UNIFORM_SQL = query_sql("uniform_hits")
CATEGORY_SQL = query_sql("attribution_categories")
HITS_SQL = query_sql("attribution_hits")
UNIFORM = "baseline:uniform_random"
CI_METHODS = {"wilson": "Wilson score interval", "poisson_binomial": "exact Poisson-binomial range of a random "
              "guesser's accuracy", "bootstrap": "percentile bootstrap over trajectories"}


@dataclass(frozen=True)
class Measure:
    """One agreement number with its interval; `value` None with `reason` when it does not apply."""

    value: float | None
    low: float | None = None
    high: float | None = None
    n: int = 0
    ci: str | None = None  # a key of CI_METHODS
    reason: str | None = None

    def text(self) -> str:
        """As a table cell: value [low, high] to three decimals, or why it does not apply."""
        if self.value is None:
            return self.reason or "does not apply"
        return f"{self.value:.3f} [{self.low:.3f}, {self.high:.3f}]" if self.low is not None else f"{self.value:.3f}"


def wilson_share(hits: int, n: int, confidence: float, reason: str = "does not apply") -> Measure:
    """hits / n with its Wilson interval, or `reason` when n is 0 (the one share-with-CI of the agreements)."""
    if not n:
        return Measure(None, n=0, reason=reason)
    low, high = wilson_interval(hits, n, confidence)
    return Measure(hits / n, low, high, n, "wilson")


@dataclass(frozen=True)
class MethodAgreement:
    """A method's agreement with the people's first errors in one run."""

    method: str
    n_labelled: int
    coverage: float
    step: Measure
    within1: Measure
    within3: Measure
    agent: Measure
    category: Measure
    # Paired against the rules on the same labelled trajectories: McNemar on "named the people's step".
    vs_rules: McNemarResult | None = None
    vs_rules_reason: str | None = None


@dataclass(frozen=True)
class HumanAgreement:
    """Every method's agreement in one run, and the SQL behind it."""

    run_id: str
    methods: list[MethodAgreement] = field(default_factory=list)
    sql: str = AGREEMENT_SQL

    def frame(self) -> pl.DataFrame:
        """One row per method: each measure as value [low, high], or its reason."""
        def paired(r: MethodAgreement) -> str:
            t = r.vs_rules
            if t is None:
                return r.vs_rules_reason or ""
            return f"only rules {t.a_only}, only this {t.b_only}; exact p {t.exact_p:.3g}"
        return pl.DataFrame(
            [{"method": r.method, "n": r.n_labelled, "coverage": round(r.coverage, 3),
              "step_accuracy": r.step.text(), "within_1": r.within1.text(), "within_3": r.within3.text(),
              "agent_accuracy": r.agent.text(), "category_kappa": r.category.text(), "vs_rules_mcnemar": paired(r)}
             for r in self.methods],
            schema={"method": pl.Utf8, "n": pl.Int64, "coverage": pl.Float64, "step_accuracy": pl.Utf8,
                    "within_1": pl.Utf8, "within_3": pl.Utf8, "agent_accuracy": pl.Utf8, "category_kappa": pl.Utf8,
                    "vs_rules_mcnemar": pl.Utf8})


def poisson_binomial_range(p: np.ndarray, confidence: float = DEFAULT_CONFIDENCE) -> tuple[float, float]:
    """Central interval of (sum of independent Bernoulli(p_i)) / n, computed exactly by convolution."""
    pmf = np.array([1.0])
    for q in np.asarray(p, dtype=float):
        pmf = np.convolve(pmf, [1.0 - q, q])
    cdf = np.cumsum(pmf)
    tail = (1.0 - confidence) / 2
    low = int(np.searchsorted(cdf, tail - 1e-12))
    high = int(np.searchsorted(cdf, 1.0 - tail - 1e-12))
    n = len(p)
    return low / n, high / n


def _uniform_probabilities(rows: list[dict[str, Any]]) -> dict[str, np.ndarray]:
    step, w1, w3, agent = [], [], [], []
    for r in rows:
        n, g = r["n_steps"], r["step_index"]
        step.append(1.0 / n)
        w1.append((min(g + 1, n - 1) - max(g - 1, 0) + 1) / n)
        w3.append((min(g + 3, n - 1) - max(g - 3, 0) + 1) / n)
        if r["agent"] is not None and r["n_agents"]:
            agent.append(1.0 / r["n_agents"] if r["agent_spoke"] else 0.0)
    return {"step": np.array(step), "within1": np.array(w1), "within3": np.array(w3), "agent": np.array(agent)}


def _kappa(pairs: Sequence[tuple[object, object]], n_resamples: int, seed: int, confidence: float) -> Measure:
    human = np.array([h for h, _ in pairs], dtype=object)
    method = np.array([m for _, m in pairs], dtype=object)
    point = cohen_kappa(human, method).kappa
    rng = generator(seed)
    draws = [cohen_kappa(human[i], method[i]).kappa
             for i in (rng.integers(0, len(pairs), len(pairs)) for _ in range(n_resamples))]
    tail = (1 - confidence) / 2
    return Measure(point, float(np.quantile(draws, tail)), float(np.quantile(draws, 1 - tail)), len(pairs),
                   "bootstrap")


def human_agreement(con: Any, run_id: str, method: str | None = None, *, confidence: float = DEFAULT_CONFIDENCE,
                    n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> HumanAgreement:
    """Each method's (or one method's) agreement with the run's human first errors, with 95% intervals:
    Wilson for a method's accuracies, the exact Poisson-binomial range for the uniform baseline, a
    percentile bootstrap over trajectories for kappa. Baselines are always included beside `method`."""
    cur = con.execute(AGREEMENT_SQL, {"run": run_id})
    names = [d[0] for d in cur.description]
    rows = [dict(zip(names, r, strict=True)) for r in cur.fetchall()]
    rules_reason = next((r["step_reason"] for r in rows if r["method"] == "rules"), None)
    if method is not None:
        known = {r["method"] for r in rows}
        if rows and method not in known:
            rows.append({**rows[0], "method": method, "n_step_attributed": 0,
                         "step_reason": f"does not apply: no attribution by {method!r} in this run "
                                        f"(known: {', '.join(sorted(known))})",
                         "agent_hits": None, "n_category_pairs": 0})
        rows = [r for r in rows if r["method"] == method or r["method"].startswith("baseline:")]
    cur = con.execute(UNIFORM_SQL, {"run": run_id})
    uniform = _uniform_probabilities([dict(zip([d[0] for d in cur.description], r, strict=True))
                                      for r in cur.fetchall()])
    pairs: dict[str, list[tuple[str, str]]] = {}
    for m, human, theirs in con.execute(CATEGORY_SQL, {"run": run_id}).fetchall():
        pairs.setdefault(m, []).append((human, theirs))
    hits: dict[str, dict[str, bool]] = {}
    for m, trajectory, hit in con.execute(HITS_SQL, {"run": run_id}).fetchall():
        hits.setdefault(m, {})[trajectory] = bool(hit)
    out = HumanAgreement(run_id)
    for r in rows:
        n = r["n_labelled"]
        is_uniform = r["method"] == UNIFORM

        def measure(hits: float | None, denominator: int, reason: str | None, key: str,
                    is_uniform: bool = is_uniform) -> Measure:
            if hits is None or reason is not None or not denominator:
                return Measure(None, n=denominator, reason=reason or "does not apply")
            if is_uniform:
                low, high = poisson_binomial_range(uniform[key], confidence)
                return Measure(hits / denominator, low, high, denominator, "poisson_binomial")
            return wilson_share(int(round(hits)), denominator, confidence)

        step_reason = r["step_reason"]
        category = (_kappa(pairs[r["method"]], n_resamples, seed, confidence) if r["method"] in pairs
                    else Measure(None, reason=r.get("category_reason") or "does not apply: the method names no "
                                 "category"))
        out.methods.append(MethodAgreement(
            method=r["method"], n_labelled=n, coverage=r["n_step_attributed"] / n if n else 0.0,
            step=measure(r["step_hits"], n, step_reason, "step"),
            within1=measure(r["within1_hits"], n, step_reason, "within1"),
            within3=measure(r["within3_hits"], n, step_reason, "within3"),
            agent=measure(r["agent_hits"], r["n_agent_labelled"], r["agent_reason"], "agent"), category=category,
            **_versus_rules(r["method"], hits, rules_reason)))
    return out


def _versus_rules(method: str, hits: dict[str, dict[str, bool]], rules_reason: str | None) -> dict[str, Any]:
    """McNemar of a method's step hits against the rules' on the same labelled trajectories, or why not."""
    if method == "rules":
        return {}
    if method not in hits:
        return {"vs_rules_reason": "does not apply: the method names no step of a labelled trajectory"
                if method != UNIFORM else "does not apply: a uniform guess has expected hits, no step per trajectory"}
    if "rules" not in hits:
        return {"vs_rules_reason": rules_reason or "does not apply: the rules attribute no labelled trajectory"}
    ours, rules = hits[method], hits["rules"]
    rules_only = sum(rules[t] and not ours[t] for t in rules)
    ours_only = sum(ours[t] and not rules[t] for t in rules)
    return {"vs_rules": mcnemar_test(rules_only, ours_only)}
