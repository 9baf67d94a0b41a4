"""`trajscope compare`: paired statistics between two runs on the same question ids, as a paper table."""
from __future__ import annotations

import click

from trajscope.format import COMPARE_METRICS, DEFAULT_COMPARE_METRIC

from ._options import db_option, read_failure, statistics_limits, timeout_option


@click.command("compare")
@click.argument("run_a")
@click.argument("run_b")
@click.option("--metric", type=click.Choice(COMPARE_METRICS), default=DEFAULT_COMPARE_METRIC, show_default=True,
              help="Per-question outcome; 'correct' (the default, as on the Compare page) is the papers' "
                   "criterion: the LLM verdict, else Contain-Acc; 'llm' is LLM-Acc (the verdict averaged over "
                   "judge models counts as correct at 0.5 or more).")
@click.option("--rubric", default=None, metavar="HASH[:MODEL]",
              help="Outcome: matches this rubric (trajscope scan; 1 match, 0 no_match, unsure and error verdicts "
                   "left out), instead of --metric. The hash is rubric_verdicts.rubric_hash or a prefix of it.")
@click.option("--strata", type=click.Choice(["dataset", "question_type", "hop_count", "a_zero_read"]),
              default=None, help="Add one row per value of this question column (a_zero_read: A finalised voluntarily "
                   "without reading).")
@click.option("--zero-read", "zero_read", is_flag=True,
              help="Zero-read rescue (Read-Gate Table 1): only the questions run A finalised voluntarily (end reason "
                   "final) without reading.")
@click.option("--margin", type=float, default=None,
              help="Add a TOST equivalence test with this margin on the accuracy delta (e.g. 0.02).")
@click.option("--table4", is_flag=True,
              help="Also print Read-Gate Table 4: the marginal and the Mantel-Haenszel odds ratio (B vs A) of "
                   "post-gold-read failure across read-exposure strata (0, 1, 2, 3, 4+ passages read), with "
                   "95% CIs; needs `trajscope judge` to have labelled the runs.")
@click.option("--funnel", is_flag=True,
              help="Also print the evidence funnel paired stage by stage (view evidence_funnel_question): for all "
                   "hops and per hop, the share of questions whose gold passages were queried for, retrieved, shown, "
                   "read and used under A and B, the change, the discordant counts and McNemar's exact p.")
@click.option("--resamples", type=click.IntRange(100, 1_000_000), default=1000, show_default=True,
              help="Paired bootstrap resamples.")
@click.option("--seed", type=int, default=42, show_default=True, help="Bootstrap seed.")
@click.option("--format", "fmt", type=click.Choice(["markdown", "latex", "csv"]), default="markdown",
              show_default=True, help="Output table format.")
@click.option("--digits", type=click.IntRange(1, 17), default=3, show_default=True,
              help="Decimal places (markdown and latex; csv prints full precision).")
@db_option
@timeout_option
def command(run_a, run_b, metric, rubric, strata, zero_read, margin, table4, funnel, resamples, seed, fmt, digits,
            db_path, timeout_s) -> None:
    """Compare RUN_B against RUN_A, paired by question id.

    Prints accuracy under A and B, the delta (B - A) with a 95% paired bootstrap CI, the
    transition counts (a_only: right under A only; b_only: right under B only) and McNemar's exact
    and continuity-corrected chi-square p-values, overall and per stratum. Questions only one run
    answered are excluded and the header says how many; runs with no shared question are refused.

    Example: trajscope compare baseline readgate --strata question_type --format latex

    Example: trajscope compare baseline readgate --funnel   (where along the funnel B gained or lost)
    """
    import duckdb

    from trajscope.analysis.queries import QueryError
    from trajscope.analysis.stats import UnpairedComparison
    from trajscope.api import compare_tables
    from trajscope.warehouse import ReadRefused, WarehouseBusy, WarehouseMissing
    from trajscope.warehouse.export import to_csv, to_latex, to_markdown

    try:
        result = compare_tables(db_path, run_a, run_b, metric=metric, limits=statistics_limits(timeout_s),
                                rubric=rubric, strata=strata, zero_read=zero_read, margin=margin, table4=table4,
                                funnel=funnel, resamples=resamples, seed=seed)
    except (QueryError, UnpairedComparison) as exc:
        raise click.ClickException(str(exc)) from None
    except (WarehouseBusy, WarehouseMissing, ReadRefused) as exc:
        raise read_failure(exc) from None
    except duckdb.Error as exc:
        raise click.ClickException(f"{db_path}: query failed: {str(exc).splitlines()[0]}") from None
    tables = [(t.caption, t.frame) for t in result.tables]
    for k, (caption, table) in enumerate(tables):
        if fmt == "csv":
            click.echo(caption, err=True)
            click.echo(to_csv(table), nl=False)
        elif fmt == "latex":
            click.echo(to_latex(table, caption=caption, float_digits=digits), nl=False)
        else:
            click.echo(("\n" if k else "") + caption + "\n")
            click.echo(to_markdown(table, float_digits=digits), nl=False)
