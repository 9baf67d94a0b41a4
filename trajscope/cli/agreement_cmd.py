"""`trajscope agreement`: Cohen's kappa between entity extractors and between judges, the pooled
co-occurrence table, and (--human RUN) step-attribution methods against human labels."""
from __future__ import annotations

import click

from ._options import db_option


@click.command("agreement")
@click.argument("run_ids", nargs=-1)
@click.option("--robustness", nargs=2, metavar="JUDGE_A JUDGE_B", default=None,
              help="Also print Read-Gate Table 18: JUDGE_B's verdicts on a stratified sample of the runs judged by "
                   "JUDGE_A, reweighted per run (judges as 'contain' or 'llm:<model>').")
@click.option("--format", "fmt", type=click.Choice(["markdown", "csv"]), default="markdown", show_default=True,
              help="Output table format.")
@click.option("--human", "human_run", default=None, metavar="RUN",
              help="Instead: how well each step-attribution method finds the first error people labelled in RUN "
                   "(step accuracy, within 1 and 3 steps, agent accuracy, category kappa, with 95% CIs, McNemar "
                   "against the rules) beside the trivial baselines; and each rubric scanner's precision, recall "
                   "and kappa against the labels people gave its verdicts on the Search page.")
@click.option("--method", default=None, metavar="NAME",
              help="With --human: one method (rules, llm:<protocol>:<model>, ...) beside the baselines; "
                   "default every method with attributions.")
@db_option
def command(run_ids, robustness, fmt, human_run, method, db_path) -> None:
    """Agreement over RUN_IDS pooled (every run when none is given), or with people (--human RUN).

    Prints Cohen's kappa of the regex and spaCy discipline indicators (Read-Gate §5.1), of every pair of
    judges present (each LLM judge model and Contain-Acc; Read-Gate App. L), and the discipline /
    post-gold-read co-occurrence table pooled over the runs. Needs `trajscope judge` to have run.

    With --human RUN: for RUN's trajectories with a human first error (ingest --labels, or labels in the
    log), each method of step_attributions against it, with the baselines always the first step, always
    the final step, a uniform random step and the most frequent agent (docs/definitions.md, "Agreement
    with people"). A measure a method or the labels cannot give reads "does not apply: why".

    Examples: trajscope agreement baseline readgate;
    trajscope agreement --human who_and_when:algorithm_generated --method rules
    """
    import duckdb
    import polars as pl

    from trajscope.warehouse import ReadRefused, WarehouseBusy, WarehouseMissing, open_read
    from trajscope.warehouse.export import to_csv, to_markdown
    from trajscope.warehouse.queries import extractor_agreement, judge_agreements, judge_robustness, pooled_cooccurrence

    if human_run is not None:
        _human(db_path, human_run, method, fmt)
        return

    runs = list(run_ids) or None
    try:
        # The read path: brought up to date, sandboxed, every query checked and time-limited.
        with open_read(db_path) as con:
            agreements = [extractor_agreement(con, runs), *judge_agreements(con, runs)]
            pooled = pooled_cooccurrence(con, runs)
            robust = judge_robustness(con, *robustness, run_id=runs) if robustness else None
    except (WarehouseMissing, WarehouseBusy, ReadRefused) as exc:
        raise click.ClickException(str(exc)) from None
    except duckdb.Error as exc:
        raise click.ClickException(f"{db_path}: query failed: {exc}") from None
    kappas = pl.DataFrame(
        [{"agreement": a.what, "n": a.agreement.n if a.agreement else 0,
          "kappa": a.agreement.kappa if a.agreement else None,
          "observed_agreement": a.agreement.observed_agreement if a.agreement else None} for a in agreements],
        schema={"agreement": pl.Utf8, "n": pl.Int64, "kappa": pl.Float64, "observed_agreement": pl.Float64})
    scope = f"runs {', '.join(runs)}" if runs else "every run"
    notes = [f"Cohen's kappa over {scope} (n = 0: nothing to compare, kappa empty)",
             f"Co-occurrence among wrong trajectories pooled over {scope}"
             + (f"; left out (no discipline test applies): {', '.join(pooled.excluded_runs)}" if pooled.excluded_runs
                else "")]
    tables = [kappas, pooled.frame]
    if robust is not None:
        notes.append(f"Table 18: {robust.rater_b} on a sample stratified by {robust.rater_a}'s verdict, reweighted "
                     "per run (difference = B - A, share)")
        tables.append(pl.DataFrame(
            [{"run_id": r.run_id, "n_population": r.n_population, "n_sample": r.n_sample, "accuracy_a": r.accuracy_a,
              "accuracy_b_reweighted": r.accuracy_b_reweighted, "difference": r.difference} for r in robust.runs],
            schema={"run_id": pl.Utf8, "n_population": pl.Int64, "n_sample": pl.Int64, "accuracy_a": pl.Float64,
                    "accuracy_b_reweighted": pl.Float64, "difference": pl.Float64}))
    for k, (note, table) in enumerate(zip(notes, tables, strict=False)):
        if fmt == "csv":
            click.echo(note, err=True)
            click.echo(to_csv(table), nl=False)
        else:
            click.echo(("\n" if k else "") + note + "\n")
            click.echo(to_markdown(table, float_digits=3), nl=False)


def _human(db_path, run_id: str, method: str | None, fmt: str) -> None:
    import duckdb

    from trajscope.warehouse import ReadRefused, WarehouseBusy, WarehouseMissing, open_read
    from trajscope.warehouse.export import to_csv, to_markdown
    from trajscope.warehouse.queries import CI_METHODS, human_agreement, rubric_agreement

    try:
        with open_read(db_path) as con:
            result = human_agreement(con, run_id, method)
            rubrics = rubric_agreement(con, run_id)
    except (WarehouseMissing, WarehouseBusy, ReadRefused) as exc:
        raise click.ClickException(str(exc)) from None
    except duckdb.Error as exc:
        raise click.ClickException(f"{db_path}: query failed: {exc}") from None
    if not result.methods and not rubrics.rows:
        raise click.ClickException(f"run {run_id!r} has no trajectory with a human error label "
                                   "(load some with trajscope ingest --labels FILE) and no labelled rubric verdict "
                                   "(label verdicts on the Search page)")
    tables = []
    if result.methods:
        used = sorted({m.ci for r in result.methods for m in (r.step, r.within1, r.within3, r.agent, r.category)
                       if m.ci})
        tables.append((f"Agreement with people's first errors in run {run_id} (n = {result.methods[0].n_labelled} "
                       "labelled trajectories; an unattributed trajectory is a miss; vs_rules_mcnemar: the method "
                       "paired against the rules on the same trajectories, exact McNemar). 95% CIs: "
                       + "; ".join(f"{k}: {CI_METHODS[k]}" for k in used), result.frame()))
    if rubrics.rows:
        tables.append((f"Rubric scanners against people's labels of their verdicts in run {run_id} (agree keeps the "
                       "verdict, disagree flips it; unsure labels and verdicts left out). 95% CIs: precision and "
                       f"recall {CI_METHODS['wilson']}, kappa {CI_METHODS['bootstrap']}", rubrics.frame()))
    for k, (note, table) in enumerate(tables):
        if fmt == "csv":
            click.echo(note, err=True)
            click.echo(to_csv(table), nl=False)
        else:
            click.echo(("\n" if k else "") + note + "\n")
            click.echo(to_markdown(table), nl=False)
