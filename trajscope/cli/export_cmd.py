"""`trajscope export`: a view or query to CSV, Parquet, LaTeX (booktabs) or Markdown."""
from __future__ import annotations

import re

import click

from ._options import db_option, read_frame, read_limit_options

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@click.command("export")
@click.argument("query_or_view")
@db_option
@click.option("--format", "fmt", type=click.Choice(["csv", "parquet", "latex", "markdown"]),
              required=True)
@click.option("--out", type=click.Path(dir_okay=False), required=True, help="Output file.")
@click.option("--caption", default=None, help="LaTeX caption.")
@click.option("--label", default=None, help="LaTeX label.")
@click.option("--digits", default=3, show_default=True, help="Decimal places for floats (text formats).")
@read_limit_options(max_rows_default=1_000_000,
                    max_rows_help="Row cap: a result with more rows is refused, nothing is written.")
def command(query_or_view, db_path, fmt, out, caption, label, digits, limits) -> None:
    """Export QUERY_OR_VIEW (a view/table name or a SELECT) for a paper, through the sandboxed read path.

    Example: trajscope export run_summary --format latex --out table1.tex
    """
    from trajscope.warehouse.export import check_output_path, export_table, source_logs

    # Before the query runs: an --out that is the warehouse (or its WAL), or a log it was built from (the only
    # way to rebuild it), by any link, is refused.
    check_output_path(out, db=db_path, reading=source_logs(db_path))
    query = f'SELECT * FROM "{query_or_view}"' if _IDENTIFIER.match(query_or_view) else query_or_view
    result = read_frame(db_path, query, limits)
    if result.truncated:
        # A paper table cut at the cap would be silently wrong: refuse instead.
        raise click.ClickException(
            f"the result has more than {limits.max_rows:,} rows (the row cap); nothing written to {out}; "
            "raise --max-rows or filter the query"
        )
    df = result.df
    options = {}
    if fmt == "latex":
        options = {"caption": caption, "label": label, "float_digits": digits}
    elif fmt == "markdown":
        options = {"float_digits": digits}
    export_table(df, fmt, out, db=db_path, **options)
    click.echo(f"{out}: {df.height} rows x {df.width} columns ({fmt})")
