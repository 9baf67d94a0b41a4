"""`trajscope sql`: one read-only, sandboxed, bounded query against the warehouse."""
from __future__ import annotations

import click

from ._options import db_option, lake_db, lake_option, read_frame, read_limit_options


@click.command("sql")
@click.argument("query")
@db_option
@lake_option
@read_limit_options(max_rows_default=100, max_rows_help="Row cap: most rows printed (the query stops there).")
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "markdown"]), default="table",
              show_default=True)
def command(query, db_path, lake, limits, fmt) -> None:
    """Run QUERY read-only: one SELECT, no writes, no file or network access, no extensions,
    bounded in time, rows, result bytes, memory and temp disk (see the limit flags).

    Example: trajscope sql "SELECT run_id, em, contain_acc FROM run_summary"
    """
    from trajscope.format import terminal_text
    from trajscope.warehouse.export import to_csv, to_markdown, to_text

    result = read_frame(lake_db(lake, db_path), query, limits)
    df = result.df
    if fmt == "table":
        click.echo(to_text(df), nl=False)
    else:  # printed, so control characters in the values are shown as escapes (`export` writes them)
        click.echo(terminal_text(to_csv(df) if fmt == "csv" else to_markdown(df)), nl=False)
    if result.truncated:
        click.echo(f"(stopped at the row cap of {limits.max_rows:,} rows; raise --max-rows or use "
                   "`trajscope export`)", err=True)
