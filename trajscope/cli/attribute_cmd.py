"""`trajscope attribute`: a model names the decisive error step (and agent) of each failed trajectory."""
from __future__ import annotations

import click

from ._options import db_option, read_failure
from .scan_cmd import model_options, resolve


@click.command("attribute")
@click.option("--runs", "runs", multiple=True, required=True, metavar="RUN", help="Run to attribute (repeatable).")
@click.option("--protocol", type=click.Choice(["all-at-once", "step-by-step", "binary-search", "hybrid"]),
              default="all-at-once", show_default=True,
              help="Who&When's protocols (Zhang et al., ICML 2025); hybrid is all-at-once shown the rules' evidence "
                   "funnel and first-decisive-error candidate where those views exist.")
@click.option("--where", default=None, metavar="SQL",
              help="SQL condition over trajectory_forensics; default: the trajectories not judged correct.")
@click.option("--limit", type=click.IntRange(1, 10_000_000), default=None, help="Attribute at most N trajectories.")
@click.option("--token-budget", type=click.IntRange(200, 1_000_000), default=2000, show_default=True,
              help="Tokens (characters / 4) one rendered trajectory or segment may take; the middle is cut beyond.")
@model_options
@db_option
def command(runs, protocol, where, limit, token_budget, model_spec, base_url, concurrency, no_cache, db_path) -> None:
    """Ask a model for the decisive error step of each failed trajectory of RUNS, with a reason.

    all-at-once reads the whole log in one call; step-by-step asks of each step in turn whether it is
    the decisive error and stops at the first yes; binary-search asks which half of a segment holds it
    until one step is left. The agent is named where the log has agents. Attributions are stored like
    rubric verdicts and appear in the view model_step_attributions (method llm:<protocol>:<model>),
    which `trajscope agreement --human` scores against people's labels (Who&When's step-level and
    agent-level accuracy).

    Example: trajscope attribute --runs whowhen --protocol binary-search --model gpt-5-mini
    """
    from pathlib import Path

    from trajscope.engine.llm import LocalModelError
    from trajscope.engine.scanners import DEFAULT_WHERE, attribute
    from trajscope.warehouse import ReadRefused, WarehouseBusy, WarehouseMissing

    if not Path(db_path).exists():
        raise click.ClickException(
            f"{db_path}: no warehouse here; create one with `trajscope ingest LOG --db {db_path}`")
    config, cache = resolve(model_spec, base_url, no_cache)
    try:
        report = attribute(db_path, list(runs), protocol, config=config, where=where or DEFAULT_WHERE, limit=limit,
                           cache=cache, concurrency=concurrency, token_budget=token_budget, progress=True)
    except (WarehouseMissing, WarehouseBusy, ReadRefused) as exc:
        raise read_failure(exc) from None
    except (ValueError, LocalModelError) as exc:
        raise click.ClickException(str(exc)) from None
    if not report.n_trajectories:
        click.echo(f"no trajectory of {', '.join(runs)} matches the slice; nothing attributed", err=True)
        return
    click.echo(report.summary())
    for error in report.errors[:5]:
        click.echo(f"  no attribution: {error}", err=True)
