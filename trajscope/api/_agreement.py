"""Agreement between raters: the tables `trajscope agreement` prints and `Warehouse.agreement` returns."""
from __future__ import annotations

from pathlib import Path

import polars as pl

from ._results import AgreementResult, CaptionedTable


def agreement_tables(db_path: str | Path | None, runs: list[str] | None = None,
                     robustness: tuple[str, str] | None = None) -> AgreementResult:
    """Cohen's kappa of extractors and judges, the pooled co-occurrence table and (robustness=(A, B)) Table 18,
    over runs pooled (every run when None)."""
    from trajscope.analysis.queries import (
        extractor_agreement,
        judge_agreements,
        judge_robustness,
        pooled_cooccurrence,
    )
    from trajscope.warehouse import open_read

    # The read path: brought up to date, sandboxed, every query checked and time-limited.
    with open_read(db_path) as con:
        agreements = [extractor_agreement(con, runs), *judge_agreements(con, runs)]
        pooled = pooled_cooccurrence(con, runs)
        robust = judge_robustness(con, *robustness, run_id=runs) if robustness else None
    kappas = pl.DataFrame(
        [{"agreement": a.what, "n": a.agreement.n if a.agreement else 0,
          "kappa": a.agreement.kappa if a.agreement else None,
          "observed_agreement": a.agreement.observed_agreement if a.agreement else None} for a in agreements],
        schema={"agreement": pl.Utf8, "n": pl.Int64, "kappa": pl.Float64, "observed_agreement": pl.Float64})
    scope = f"runs {', '.join(runs)}" if runs else "every run"
    tables = [
        CaptionedTable(f"Cohen's kappa over {scope} (n = 0: nothing to compare, kappa empty)", kappas),
        CaptionedTable(f"Co-occurrence among wrong trajectories pooled over {scope}"
                       + (f"; left out (no discipline test applies): {', '.join(pooled.excluded_runs)}"
                          if pooled.excluded_runs else ""), pooled.frame),
    ]
    if robust is not None:
        tables.append(CaptionedTable(
            f"Table 18: {robust.rater_b} on a sample stratified by {robust.rater_a}'s verdict, reweighted "
            "per run (difference = B - A, share)",
            pl.DataFrame(
                [{"run_id": r.run_id, "n_population": r.n_population, "n_sample": r.n_sample,
                  "accuracy_a": r.accuracy_a, "accuracy_b_reweighted": r.accuracy_b_reweighted,
                  "difference": r.difference} for r in robust.runs],
                schema={"run_id": pl.Utf8, "n_population": pl.Int64, "n_sample": pl.Int64, "accuracy_a": pl.Float64,
                        "accuracy_b_reweighted": pl.Float64, "difference": pl.Float64})))
    return AgreementResult(tuple(tables))


class NoHumanLabels(LookupError):
    """A run with neither a human first-error label nor a labelled rubric verdict."""


def human_agreement_tables(db_path: str | Path | None, run_id: str, method: str | None = None) -> AgreementResult:
    """How well each step-attribution method (or `method`) finds people's first errors in run_id, beside the
    trivial baselines, and each rubric scanner against people's labels of its verdicts."""
    from trajscope.analysis.queries import CI_METHODS, human_agreement, rubric_agreement
    from trajscope.warehouse import open_read

    with open_read(db_path) as con:
        result = human_agreement(con, run_id, method)
        rubrics = rubric_agreement(con, run_id)
    if not result.methods and not rubrics.rows:
        raise NoHumanLabels(f"run {run_id!r} has no trajectory with a human error label "
                            "(load some with trajscope ingest --labels FILE) and no labelled rubric verdict "
                            "(label verdicts on the Search page)")
    tables = []
    if result.methods:
        used = sorted({m.ci for r in result.methods for m in (r.step, r.within1, r.within3, r.agent, r.category)
                       if m.ci})
        tables.append(CaptionedTable(
            f"Agreement with people's first errors in run {run_id} (n = {result.methods[0].n_labelled} "
            "labelled trajectories; an unattributed trajectory is a miss; vs_rules_mcnemar: the method "
            "paired against the rules on the same trajectories, exact McNemar). 95% CIs: "
            + "; ".join(f"{k}: {CI_METHODS[k]}" for k in used), result.frame()))
    if rubrics.rows:
        tables.append(CaptionedTable(
            f"Rubric scanners against people's labels of their verdicts in run {run_id} (agree keeps the "
            "verdict, disagree flips it; unsure labels and verdicts left out). 95% CIs: precision and "
            f"recall {CI_METHODS['wilson']}, kappa {CI_METHODS['bootstrap']}", rubrics.frame()))
    return AgreementResult(tuple(tables))


__all__ = ["NoHumanLabels", "agreement_tables", "human_agreement_tables"]
