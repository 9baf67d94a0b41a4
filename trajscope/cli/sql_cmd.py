"""`trajscope sql`: a read-only, sandboxed query against the warehouse."""
from __future__ import annotations

import shutil

import click
import polars as pl

from ._options import db_option, readonly_frame


@click.command("sql")
@click.argument("query")
@db_option
@click.option("--max-rows", default=100, show_default=True, help="Rows to print.")
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "markdown"]), default="table",
              show_default=True)
def command(query, db_path, max_rows, fmt) -> None:
    """Run QUERY read-only: no writes, no file or network access, no extensions.

    Example: trajscope sql "SELECT run_id, em, contain_acc FROM run_summary"
    """
    from warehouse.export import to_csv, to_markdown

    df = readonly_frame(db_path, query)
    shown = df.head(max_rows)
    if fmt == "table":
        width = max(shutil.get_terminal_size((160, 24)).columns, 160)
        with pl.Config(tbl_rows=max_rows, tbl_cols=-1, fmt_str_lengths=60, tbl_width_chars=width):
            click.echo(shown)
    else:
        click.echo(to_csv(shown) if fmt == "csv" else to_markdown(shown), nl=False)
    if df.height > max_rows:
        click.echo(f"({df.height - max_rows} more rows; raise --max-rows or use `trajscope export`)", err=True)
