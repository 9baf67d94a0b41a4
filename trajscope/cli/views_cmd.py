"""`trajscope views`: the named views and what each answers."""
from __future__ import annotations

import click


@click.command("views")
@click.option("--sql", "show_sql", is_flag=True, help="Print each view's SQL too.")
def command(show_sql) -> None:
    """List the warehouse's named views with their one-line descriptions."""
    from warehouse import load_views

    for view in load_views():
        click.echo(f"{view.name:28s} {view.description}")
        if show_sql:
            click.echo(view.sql)
