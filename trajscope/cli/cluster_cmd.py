"""`trajscope cluster`: the failure modes of a slice, by a model's themes or by embedding clusters."""
from __future__ import annotations

import click

from ._options import db_option, read_failure
from .scan_cmd import model_options, resolve


@click.command("cluster")
@click.option("--runs", "runs", multiple=True, required=True, metavar="RUN", help="Run to cluster (repeatable).")
@click.option("--method", type=click.Choice(["embedding", "propose-assign"]), default="embedding", show_default=True,
              help="embedding: k-means over all-MiniLM-L6-v2 embeddings of what the agent did (offline, no chat "
                   "model); propose-assign: the model proposes k themes, then assigns each trajectory (or other).")
@click.option("--k", type=click.IntRange(1, 100), default=5, show_default=True, help="Clusters, or themes.")
@click.option("--where", default=None, metavar="SQL", help="SQL condition over trajectory_forensics.")
@click.option("--limit", type=click.IntRange(1, 10_000_000), default=None, help="Cluster at most N trajectories.")
@model_options
@db_option
def command(runs, method, k, where, limit, model_spec, base_url, concurrency, no_cache, db_path) -> None:
    """Cluster the trajectories of RUNS (and --where) into failure modes; store names, descriptions, examples.

    Clusters are in the tables clusterings, clusters and cluster_members. propose-assign works from the
    trajectories' rubric explanations when they have some (trajscope scan), else from their questions,
    answers and actions.

    Example: trajscope cluster --runs baseline --where "NOT correct" --method propose-assign --k 4 --model gpt-5-mini
    """
    from pathlib import Path

    from trajscope.engine.llm import LocalModelError
    from trajscope.engine.scanners import cluster
    from trajscope.warehouse import ReadRefused, WarehouseBusy, WarehouseMissing

    if not Path(db_path).exists():
        raise click.ClickException(
            f"{db_path}: no warehouse here; create one with `trajscope ingest LOG --db {db_path}`")
    config, cache = resolve(model_spec, base_url, no_cache) if method == "propose-assign" else (None, None)
    try:
        report = cluster(db_path, list(runs), method, k, config=config, where=where, limit=limit, cache=cache,
                         concurrency=concurrency, progress=True)
    except (WarehouseMissing, WarehouseBusy, ReadRefused) as exc:
        raise read_failure(exc) from None
    except (ValueError, LocalModelError) as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(report.summary())
    for error in report.errors[:5]:
        click.echo(f"  assigned to other after a failed reply: {error}", err=True)
