"""`trajscope views`: the named views and what each answers; with a name, its columns and what each means."""
from __future__ import annotations

import click


@click.command("views")
@click.argument("name", required=False)
@click.option("--sql", "show_sql", is_flag=True, help="Print each view's SQL too.")
@click.option("--db", "db_path", type=click.Path(dir_okay=False), default=None,
              help="Read the views, tables and column descriptions stored in this warehouse "
                   "(default: those this version of trajscope installs).")
def command(name, show_sql, db_path) -> None:
    """List the warehouse's named views with their one-line descriptions.

    With NAME (a view or a table), show its description and every column with its type and what it
    means, as stored in the warehouse (COMMENT ON). Example: trajscope views failure_plane --db my.duckdb
    """
    from trajscope.api import UnknownView, describe_view, listed_views
    from trajscope.warehouse import ReadRefused, WarehouseBusy, WarehouseMissing, load_views

    views = {v.name: v for v in load_views()}
    try:
        if name is None:
            listed = listed_views(db_path)
        else:
            described = describe_view(db_path, name)
    except (WarehouseMissing, WarehouseBusy, ReadRefused, UnknownView) as exc:
        raise click.ClickException(str(exc)) from None
    if name is None:
        for view_name, description in listed:
            click.echo(f"{view_name:28s} {description}")
            if show_sql and view_name in views:
                click.echo(views[view_name].sql)
        return
    click.echo(f"{name}: {described.description or '(no description stored)'}")
    width = max((len(c) for c, _, _ in described.columns), default=0)
    for column, type_, comment in described.columns:
        click.echo(f"  {column:{width}s}  {type_:12s}  {comment or ''}".rstrip())
    if show_sql and name in views:
        click.echo(views[name].sql)
