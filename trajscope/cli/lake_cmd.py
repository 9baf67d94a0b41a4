"""`trajscope lake`: a warehouse as Hive-partitioned Parquet that many machines add to and read."""
from __future__ import annotations

import click

from ._options import LakeLocation, db_option


@click.group("lake")
def command() -> None:
    """A lake: the warehouse as Parquet files under DIR/TABLE/_dataset=../_run=../_writer=../, one writer's
    rows made visible at once by its commit marker (DIR/_committed/WRITER). `trajscope ingest --lake DIR`
    adds runs from any machine without a global lock; `trajscope sql --lake DIR` and `trajscope app --lake
    DIR` read it through the same named views and the same sandbox as a warehouse file (docs/scaling.md).

    DIR may be an object storage URL (s3://bucket/lake or file://...; any fsspec store to read; the store's fsspec
    package and its usual credentials, e.g. AWS_* variables): writers upload under their own id and commit with a
    create-only object, and readers read a local mirror of the committed writers' files in $TRAJSCOPE_CACHE.
    """


@command.command("export")
@click.argument("lake", type=LakeLocation(exists=False))
@db_option
def export(lake, db_path) -> None:
    """Write the warehouse --db into the lake LAKE (created if needed) as one writer."""
    from trajscope.warehouse.lake import LakeError, export_lake

    try:
        result = export_lake(db_path, lake)
    except LakeError as exc:
        raise click.ClickException(f"{exc}\nnothing was committed to {lake}") from None
    click.echo(result.summary())


@command.command("writers")
@click.argument("lake", type=LakeLocation(exists=True))
def writers(lake) -> None:
    """List the lake's committed writers: when, from which host, which runs and how many rows."""
    from trajscope.warehouse.lake import LakeError, read_commits, readable_lake

    try:
        commits = read_commits(readable_lake(lake))
    except LakeError as exc:
        raise click.ClickException(str(exc)) from None
    for commit in commits:
        click.echo(f"{commit.committed_at}  {commit.writer}  {commit.host}  "
                   f"{commit.trajectories} trajectories  runs: {', '.join(commit.runs)}")
