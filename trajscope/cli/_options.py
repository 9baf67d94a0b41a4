"""Options and the read-only query shared by several subcommands."""
from __future__ import annotations

import click
import duckdb
import polars as pl

from warehouse import default_db_path

db_option = click.option(
    "--db",
    "db_path",
    type=click.Path(dir_okay=False),
    default=lambda: str(default_db_path()),
    show_default="$TRAJSCOPE_DB or ./trajscope.duckdb",
    help="Path of the DuckDB warehouse file.",
)


def readonly_frame(db_path: str, query: str) -> pl.DataFrame:
    """Run one query on a sandboxed read-only connection; failures become one-line CLI errors."""
    from warehouse import WarehouseBusy, WarehouseMissing, open_readonly

    try:
        with open_readonly(db_path) as con:
            return con.sql(query).pl()
    except (WarehouseMissing, WarehouseBusy) as exc:
        raise click.ClickException(str(exc)) from None
    except duckdb.Error as exc:
        raise click.ClickException(f"query refused or failed: {exc}") from None
