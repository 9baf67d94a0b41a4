"""`trajscope bundle`: one finding (a query, or a comparison of runs) as a static, self-contained HTML file."""
from __future__ import annotations

from pathlib import Path

import click

from ._options import db_option, read_limit_options


@click.command("bundle")
@db_option
@click.option("--query", "queries", multiple=True, metavar="SQL",
              help="A SELECT to show as a table (repeatable); run in the sandboxed read path.")
@click.option("--runs", "runs", multiple=True, metavar="RUN",
              help="Runs to compare (repeatable, or several after one --runs): summary, failure plane, "
                   "trajectories, figures and replays.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True, help="HTML file to write.")
@click.option("--title", default=None, help="Heading of the bundle.")
@click.option("--max-replays", type=click.IntRange(0, 10_000), default=60, show_default=True,
              help="Trajectories replayed in full; the rest are named in the manifest.")
@read_limit_options(max_rows_default=100_000)
@click.argument("more_runs", nargs=-1)
def command(db_path, queries, runs, out, title, max_replays, limits, more_runs) -> None:
    """Write one static HTML file a reviewer opens without a server or network: the tables with their
    SQL, the figures (inline SVG), the replays of the trajectories involved with an anchor per step
    (FILE.html#replay-1-step-3), and the warehouse's sha256 and trajscope version.

    The trajectories involved are those a table names (a trajectory_id column, or run_id and
    question_id), and with --runs every trajectory of the runs.

    Examples:

      trajscope bundle --runs demo:read_gate/baseline demo:read_gate/full --out finding.html

      trajscope bundle --query "SELECT * FROM failure_rg WHERE label = 'discipline'" --out discipline.html
    """
    from trajscope.app.bundle import collect_bundle, render_bundle
    from trajscope.cli.export_traces_cmd import trajscope_version
    from trajscope.warehouse import ReadRefused, WarehouseBusy, WarehouseMissing

    run_ids = list(dict.fromkeys([*runs, *more_runs]))
    if more_runs and not runs:
        raise click.UsageError("extra arguments are runs: give them after --runs")
    if not queries and not run_ids:
        raise click.UsageError("give --query SQL or --runs RUN [RUN ...]")
    from trajscope.warehouse.export import check_output_path, write_output

    check_output_path(out, db=db_path)  # never the warehouse or its WAL, by any link
    if not Path(db_path).exists():
        raise click.ClickException(f"{db_path}: no warehouse here")
    try:
        bundle = collect_bundle(Path(db_path), queries=list(queries), run_ids=run_ids, version=trajscope_version(),
                                title=title, limits=limits, max_replays=max_replays)
    except (WarehouseMissing, WarehouseBusy, ReadRefused, LookupError) as exc:
        raise click.ClickException(str(exc).splitlines()[0]) from None
    html = render_bundle(bundle)
    write_output(out, html, db=db_path)  # written beside the target and renamed over it
    click.echo(f"{out}: {len(bundle.tables)} tables, {len(bundle.figures)} figures, {len(bundle.replays)} replays "
               f"({len(html) / 1e6:.1f} MB); warehouse sha256 {bundle.db_sha256[:12]}…")
