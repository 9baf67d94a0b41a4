"""Options shared by several subcommands."""
from __future__ import annotations

import click

from warehouse import default_db_path

db_option = click.option(
    "--db",
    "db_path",
    type=click.Path(dir_okay=False),
    default=lambda: str(default_db_path()),
    show_default="$TRAJSCOPE_DB or ./trajscope.duckdb",
    help="Path of the DuckDB warehouse file.",
)
