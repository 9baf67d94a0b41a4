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
                   "and kappa against the labels people gave its verdicts on the Search page. First, each label "
                   "family's published metrics (TRAIL spans: location accuracy, category F1, joint accuracy).")
@click.option("--method", default=None, metavar="NAME",
              help="With --human: one method (rules, llm:<protocol>:<model>, ...) beside the baselines; "
                   "default every method with attributions.")
@click.option("--versus", default="rules", show_default=True, metavar="METHOD",
              help="With --human: pair every method with this one on the same trajectories (exact McNemar on "
                   "first-error hits), e.g. baseline:final_if_wrong.")
@db_option
def command(run_ids, robustness, fmt, human_run, method, versus, db_path) -> None:
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

    from trajscope.api import agreement_tables
    from trajscope.warehouse import ReadRefused, WarehouseBusy, WarehouseMissing
    from trajscope.warehouse.export import to_csv, to_markdown

    if human_run is not None:
        _human(db_path, human_run, method, fmt, versus)
        return

    runs = list(run_ids) or None
    try:
        result = agreement_tables(db_path, runs, tuple(robustness) if robustness else None)
    except (WarehouseMissing, WarehouseBusy, ReadRefused) as exc:
        raise click.ClickException(str(exc)) from None
    except duckdb.Error as exc:
        raise click.ClickException(f"{db_path}: query failed: {exc}") from None
    notes = [t.caption for t in result.tables]
    tables = [t.frame for t in result.tables]
    for k, (note, table) in enumerate(zip(notes, tables, strict=False)):
        if fmt == "csv":
            click.echo(note, err=True)
            click.echo(to_csv(table), nl=False)
        else:
            click.echo(("\n" if k else "") + note + "\n")
            click.echo(to_markdown(table, float_digits=3), nl=False)


def _human(db_path, run_id: str, method: str | None, fmt: str, versus: str = "rules") -> None:
    import duckdb

    from trajscope.analysis.queries import published_agreement
    from trajscope.api import NoHumanLabels, human_agreement_tables
    from trajscope.warehouse import ReadRefused, WarehouseBusy, WarehouseMissing, open_read
    from trajscope.warehouse.export import to_csv, to_markdown

    try:
        with open_read(db_path) as con:
            published = published_agreement(con, run_id, method, versus)
        try:
            result = human_agreement_tables(db_path, run_id, method)
        except NoHumanLabels:
            if not published.metrics.rows:
                raise
            result = None
    except (WarehouseMissing, WarehouseBusy, ReadRefused, NoHumanLabels) as exc:
        raise click.ClickException(str(exc)) from None
    except duckdb.Error as exc:
        raise click.ClickException(f"{db_path}: query failed: {exc}") from None
    metrics = published.metrics
    if metrics.rows:
        caption = (f"The benchmarks' own metrics in run {run_id} ({metrics.family}; n = {metrics.rows[0].n} "
                   f"labelled trajectories; mcnemar: paired with "
                   f"{versus if metrics.family == 'per-step labels' else 'rules'} on first-error hits, exact). "
                   "95% CIs: "
                   + ("step accuracy a percentile bootstrap over trajectories, shares Wilson, baseline:uniform the "
                      "exact Poisson-binomial range" if metrics.family == "per-step labels" else
                      "Wilson, the uniform baseline the exact Poisson-binomial range"
                      + ("; TRAIL span metrics a percentile bootstrap over traces"
                         if "TRAIL span metrics" in (metrics.family or "") else ""))
                   + ". Empty: " + "; ".join(metrics.reasons()))
        if fmt == "csv":  # one row per method, numbers only; the reasons go to stderr
            click.echo(caption, err=True)
            click.echo(to_csv(metrics.frame(numeric=True)), nl=False)
            return
        click.echo(caption + "\n")
        click.echo(to_markdown(metrics.frame()), nl=False)
        if published.answers.judges:
            click.echo(f"\nThe answer verdict against people's final labels in run {run_id} (accuracy: Wilson "
                       "95% CI; kappa: percentile bootstrap)\n")
            click.echo(to_markdown(published.answers_frame()), nl=False)
        click.echo("")
    tables = [(t.caption, t.frame) for t in result.tables] if result is not None else []
    for k, (note, table) in enumerate(tables):
        if fmt == "csv":
            click.echo(note, err=True)
            click.echo(to_csv(table), nl=False)
        else:
            click.echo(("\n" if k else "") + note + "\n")
            click.echo(to_markdown(table), nl=False)
