"""Typed queries over the failure views: post-read odds ratio, extractor and judge agreement, efficiency."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from trajscope.analysis.stats import (
    Agreement,
    MantelHaenszelResult,
    OddsRatio,
    cohen_kappa,
    mantel_haenszel,
    odds_ratio,
    pareto_frontier,
)

from ._outcomes import QueryError, require_run
from ._sql import query_sql

POST_READ_STRATA_SQL = query_sql("post_read_strata")


@dataclass(frozen=True)
class StratifiedOddsRatio:
    """Read-Gate Table 4: the marginal OR of post-gold-read failure (B vs A) and the Mantel-Haenszel OR
    across read-exposure strata, each with its 95% CI."""

    run_a: str
    run_b: str
    extractor: str
    tables: dict[int, list[list[int]]]  # read exposure (1..4) -> [[B post, B other], [A post, A other]]
    result: MantelHaenszelResult | None  # None when no stratum is informative
    sql: str
    marginal: OddsRatio | None = None  # over every judged trajectory of both runs, zero-read ones included
    zero_read: list[list[int]] | None = None  # the 0-read rows: [[B post, B other], [A post, A other]]

    @property
    def n_stratified(self) -> int:
        """Trajectories in the read-exposure strata (Read-Gate reports n = 1,863)."""
        return int(sum(sum(map(sum, t)) for t in self.tables.values()))


def post_read_odds_ratio(con: Any, run_a: str | list[str], run_b: str | list[str], *,
                         extractor: str = "regex") -> StratifiedOddsRatio:
    """Read-Gate Table 4: does B raise post-gold-read failure once read exposure is held fixed? Each arm is
    one run or several (seeds pooled); the population is the arms' judged trajectories."""
    runs_a, runs_b = _runs(run_a) or [], _runs(run_b) or []
    if set(runs_a) & set(runs_b):
        raise QueryError(f"run(s) {', '.join(sorted(set(runs_a) & set(runs_b)))} are in both arms")
    for run in (*runs_a, *runs_b):
        require_run(con, run)
    params = {"runs_a": runs_a, "runs_b": runs_b, "extractor": extractor}
    rows = con.execute(POST_READ_STRATA_SQL, params).fetchall()
    by_exposure: dict[int, list[list[int]]] = {}
    for exposure, is_b, post, other in rows:
        table = by_exposure.setdefault(int(exposure), [[0, 0], [0, 0]])
        table[0 if is_b else 1] = [int(post), int(other)]
    zero_read = by_exposure.pop(0, None)
    tables = by_exposure
    stack = np.array([tables[k] for k in sorted(tables)], dtype=float)
    try:
        result = mantel_haenszel(stack) if stack.size else None
    except ValueError:
        result = None
    pooled = np.array([*tables.values(), *([zero_read] if zero_read else [])], dtype=float).reshape(-1, 2, 2)
    marginal = odds_ratio(pooled.sum(axis=0)) if pooled.size else None
    return StratifiedOddsRatio(", ".join(runs_a), ", ".join(runs_b), extractor, tables, result,
                               POST_READ_STRATA_SQL, marginal, zero_read)


def table4_frame(odds: StratifiedOddsRatio) -> pl.DataFrame:
    """Read-Gate Table 4 as rows: each read-exposure stratum's counts, then the marginal and the
    Mantel-Haenszel OR with their CIs (NaN: undefined, a zero cell or no informative stratum)."""
    nan = float("nan")
    rows: list[dict[str, object]] = []
    strata = ([("0 reads", odds.zero_read)] if odds.zero_read else []) + [
        (f"{k}{'+' if k == 4 else ''} read{'s' if k > 1 else ''}", t) for k, t in sorted(odds.tables.items())]
    for name, t in strata:
        rows.append({"row": name, "b_post": t[0][0], "b_other": t[0][1], "a_post": t[1][0], "a_other": t[1][1],
                     "odds_ratio": None, "ci_low": None, "ci_high": None, "n": int(sum(map(sum, t)))})
    m, mh = odds.marginal, odds.result
    rows.append({"row": "marginal OR", "b_post": None, "b_other": None, "a_post": None, "a_other": None,
                 "odds_ratio": m.odds_ratio if m else nan, "ci_low": m.ci_low if m else nan,
                 "ci_high": m.ci_high if m else nan, "n": m.n if m else 0})
    rows.append({"row": "Mantel-Haenszel OR (read-exposure strata)", "b_post": None, "b_other": None,
                 "a_post": None, "a_other": None, "odds_ratio": mh.odds_ratio if mh else nan,
                 "ci_low": mh.ci_low if mh else nan, "ci_high": mh.ci_high if mh else nan,
                 "n": odds.n_stratified})
    schema = {"row": pl.Utf8, **{k: pl.Int64 for k in ("b_post", "b_other", "a_post", "a_other")},
              "odds_ratio": pl.Float64, "ci_low": pl.Float64, "ci_high": pl.Float64, "n": pl.Int64}
    return pl.DataFrame(rows, schema=schema)


EXTRACTOR_AGREEMENT_SQL = query_sql("extractor_agreement")


@dataclass(frozen=True)
class LabelAgreement:
    """Cohen's kappa between two labelings of the same trajectories."""

    what: str
    agreement: Agreement | None  # None when there is nothing to compare
    sql: str


def _runs(run_id: str | list[str] | None) -> list[str] | None:
    return [run_id] if isinstance(run_id, str) else (list(run_id) if run_id else None)


def extractor_agreement(con: Any, run_id: str | list[str] | None = None) -> LabelAgreement:
    """Kappa between the regex and spaCy discipline indicators over wrong trajectories of runs with a
    read action whose coverage both extractors computed (by `trajscope judge`); one run, a set of runs
    pooled, or every run (None). Read-Gate §5.1 reports kappa = 0.628."""
    rows = con.execute(EXTRACTOR_AGREEMENT_SQL, {"runs": _runs(run_id)}).fetchall()
    agreement = cohen_kappa([r[1] for r in rows], [r[2] for r in rows]) if rows else None
    return LabelAgreement("discipline indicator: regex vs spaCy", agreement, EXTRACTOR_AGREEMENT_SQL)


JUDGE_AGREEMENT_SQL = query_sql("judge_agreement")


JUDGE_RATERS_SQL = query_sql("judge_raters")


def judge_agreement(con: Any, rater_a: str, rater_b: str = "contain", *,
                    run_id: str | list[str] | None = None) -> LabelAgreement:
    """Kappa between two judges: "contain", "em", or "llm:<judge model>" (verdicts read by says_correct)."""
    rows = con.execute(JUDGE_AGREEMENT_SQL, {"rater_a": rater_a, "rater_b": rater_b, "runs": _runs(run_id)}).fetchall()
    agreement = cohen_kappa([r[1] for r in rows], [r[2] for r in rows]) if rows else None
    return LabelAgreement(f"{rater_a} vs {rater_b}", agreement, JUDGE_AGREEMENT_SQL)


def judge_agreements(con: Any, run_id: str | list[str] | None = None) -> list[LabelAgreement]:
    """Every pair of the judges present (each LLM judge model and Contain-Acc): Read-Gate App. L's
    judge-vs-judge kappa (0.924 between Gemini 2.5 Pro and gpt-5-mini)."""
    raters = [r[0] for r in con.execute(JUDGE_RATERS_SQL, {"runs": _runs(run_id)}).fetchall()]
    return [judge_agreement(con, a, b, run_id=run_id) for i, a in enumerate(raters) for b in raters[i + 1:]]


JUDGE_ROBUSTNESS_SQL = query_sql("judge_robustness")


@dataclass(frozen=True)
class JudgeRobustness:
    """One run: accuracy under judge A over all its trajectories, and under judge B estimated from B's
    stratified sample reweighted to the population's strata (A right / A wrong)."""

    run_id: str
    n_population: int
    n_sample: int
    accuracy_a: float
    accuracy_b_reweighted: float | None  # None when a stratum of the population has no sampled item
    difference: float | None  # B (reweighted) minus A, as a share (x100 for points)
    kappa: float | None = None  # Cohen's kappa between A and B on this run's jointly judged sample


@dataclass(frozen=True)
class JudgeRobustnessTable:
    """Read-Gate Table 18: per-run reweighted accuracy differences and kappa on the pooled sample."""

    rater_a: str
    rater_b: str
    runs: list[JudgeRobustness]
    agreement: LabelAgreement
    sql: str
    # Runs with an estimate pooled, each weighted by its population N (kappa: the pooled sample's).
    overall: JudgeRobustness | None = None


def judge_robustness(con: Any, rater_a: str, rater_b: str, *,
                     run_id: str | list[str] | None = None) -> JudgeRobustnessTable:
    """Judge B's verdicts on a stratified sample of the runs judged by A, reweighted per run: for each
    stratum s (A says right / wrong) with population share w_s, acc_B = sum_s w_s * mean_B(s)."""
    params = {"rater_a": rater_a, "rater_b": rater_b, "runs": _runs(run_id)}
    rows = con.execute(JUDGE_ROBUSTNESS_SQL, params).fetchall()
    by_run: dict[str, list[tuple[bool, int, int, int]]] = {}
    for run, stratum, n_pop, n_sample, n_b_right in rows:
        by_run.setdefault(run, []).append((bool(stratum), int(n_pop), int(n_sample), int(n_b_right)))
    runs = []
    for run, strata in by_run.items():
        n_pop = sum(s[1] for s in strata)
        acc_a = sum(s[1] for s in strata if s[0]) / n_pop
        complete = all(s[2] > 0 for s in strata)
        acc_b = sum(s[1] / n_pop * s[3] / s[2] for s in strata) if complete else None
        sample = judge_agreement(con, rater_a, rater_b, run_id=run).agreement
        runs.append(JudgeRobustness(run, n_pop, sum(s[2] for s in strata), acc_a, acc_b,
                                    None if acc_b is None else acc_b - acc_a, sample.kappa if sample else None))
    pooled = judge_agreement(con, rater_a, rater_b, run_id=run_id)
    return JudgeRobustnessTable(rater_a, rater_b, runs, pooled, JUDGE_ROBUSTNESS_SQL,
                                _reweighted_overall(runs, pooled))


def _reweighted_overall(runs: list[JudgeRobustness], pooled: LabelAgreement) -> JudgeRobustness | None:
    """The runs with an estimate pooled, each run's accuracies weighted by its population N."""
    usable = [r for r in runs if r.accuracy_b_reweighted is not None]
    n = sum(r.n_population for r in usable)
    if not n:
        return None
    acc_a = sum(r.n_population * r.accuracy_a for r in usable) / n
    acc_b = sum(r.n_population * (r.accuracy_b_reweighted or 0.0) for r in usable) / n
    return JudgeRobustness("all (reweighted)", n, sum(r.n_sample for r in usable), acc_a, acc_b, acc_b - acc_a,
                           pooled.agreement.kappa if pooled.agreement else None)


POOLED_COOCCURRENCE_SQL = query_sql("pooled_cooccurrence")


@dataclass(frozen=True)
class PooledCooccurrence:
    """The co-occurrence table pooled over runs, one row per extractor; runs it does not apply to are listed."""

    frame: pl.DataFrame
    excluded_runs: list[str]
    sql: str


def pooled_cooccurrence(con: Any, run_ids: list[str] | None = None) -> PooledCooccurrence:
    """Discipline-only / post-only / both / neither among wrong trajectories, pooled over run_ids (all runs
    when None); runs without a read action (the discipline test does not apply) are left out and named."""
    params = {"runs": list(run_ids) if run_ids else None}
    cursor = con.execute(POOLED_COOCCURRENCE_SQL, params)
    frame = pl.DataFrame(cursor.fetchall(), schema=[d[0] for d in cursor.description], orient="row")
    excluded = [r[0] for r in con.execute(
        "SELECT DISTINCT run_id FROM failure_rg_cooccurrence WHERE does_not_apply IS NOT NULL "
        "AND ($runs IS NULL OR list_contains($runs, run_id)) ORDER BY run_id", params).fetchall()]
    return PooledCooccurrence(frame, excluded, POOLED_COOCCURRENCE_SQL)


EFFICIENCY_SQL = query_sql("efficiency")


@dataclass(frozen=True)
class EfficiencyPoint:
    """One run's accuracy and cost per question, and whether it is on the Pareto frontier."""

    run_id: str
    n: int
    accuracy: float | None
    retrieved_tokens: float | None
    tokens_per_question: float | None
    cost_per_question: float | None
    on_frontier: bool


@dataclass(frozen=True)
class EfficiencyFrontier:
    """Accuracy against retrieved tokens per question across runs."""

    points: list[EfficiencyPoint]
    sql: str


def efficiency_frontier(con: Any, run_ids: list[str] | None = None) -> EfficiencyFrontier:
    """Every run's accuracy vs retrieved tokens per question, flagging the Pareto-optimal runs."""
    cursor = con.execute(EFFICIENCY_SQL, {"runs": run_ids})
    names = [d[0] for d in cursor.description]
    rows = [dict(zip(names, r, strict=False)) for r in cursor.fetchall()]
    if run_ids and len(rows) < len(set(run_ids)):
        missing = sorted(set(run_ids) - {r["run_id"] for r in rows})
        raise QueryError(f"no trajectories for run(s) {', '.join(missing)}")
    usable = [r for r in rows if r["accuracy"] is not None and r["retrieved_tokens"] is not None]
    mask = pareto_frontier(
        np.array([r["retrieved_tokens"] for r in usable], dtype=float),
        np.array([r["accuracy"] for r in usable], dtype=float),
    ) if usable else np.array([], dtype=bool)
    frontier = {r["run_id"] for r, m in zip(usable, mask, strict=False) if m}
    points = [
        EfficiencyPoint(r["run_id"], int(r["n"]), r["accuracy"], r["retrieved_tokens"],
                        r["tokens_per_question"], r["cost_per_question"], r["run_id"] in frontier)
        for r in rows
    ]
    return EfficiencyFrontier(points, EFFICIENCY_SQL)


__all__ = [
    "EXTRACTOR_AGREEMENT_SQL", "JUDGE_AGREEMENT_SQL", "JUDGE_ROBUSTNESS_SQL", "POOLED_COOCCURRENCE_SQL",
    "POST_READ_STRATA_SQL", "EfficiencyFrontier", "EfficiencyPoint", "JudgeRobustness", "JudgeRobustnessTable",
    "LabelAgreement", "PooledCooccurrence", "StratifiedOddsRatio", "efficiency_frontier", "extractor_agreement",
    "judge_agreement", "judge_agreements", "judge_robustness", "pooled_cooccurrence", "post_read_odds_ratio",
    "table4_frame",
]
