"""`trajscope views`: the named views and what each answers; with a name, its columns and what each means."""
from __future__ import annotations

import click


def _describe(con, name: str) -> tuple[str | None, list[tuple[str, str, str | None]]]:
    """The stored comment of a view or table and its (column, type, comment) rows, from DuckDB's catalog."""
    found = con.execute(
        "SELECT comment FROM duckdb_views() WHERE view_name = $n AND NOT internal "
        "UNION ALL SELECT comment FROM duckdb_tables() WHERE table_name = $n", {"n": name}).fetchall()
    if not found:
        raise click.ClickException(
            f"no view or table {name!r} in the warehouse; `trajscope views` lists the views")
    columns = con.execute(
        "SELECT column_name, data_type, comment FROM duckdb_columns() WHERE table_name = $n "
        "ORDER BY column_index", {"n": name}).fetchall()
    return found[0][0], columns


def _with_warehouse(db_path: str | None, action):
    # Without --db the columns come from an empty warehouse built in memory by this code's migrations,
    # so `trajscope views NAME` works before any data exists.
    from trajscope.warehouse import ReadRefused, WarehouseBusy, WarehouseMissing, open_read
    from trajscope.warehouse.read import open_blank

    try:
        if db_path is None:
            with open_blank() as reader:
                return action(reader)
        # The read path: brought up to date, sandboxed, refused with one line when not a warehouse.
        with open_read(db_path) as con:
            return action(con)
    except (WarehouseMissing, WarehouseBusy, ReadRefused) as exc:
        raise click.ClickException(str(exc)) from None


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
    from trajscope.warehouse import load_views

    views = {v.name: v for v in load_views()}
    if name is None:
        if db_path is None:
            listed = [(v.name, v.description) for v in views.values()]
        else:
            listed = _with_warehouse(db_path, lambda con: con.execute(
                "SELECT view_name, coalesce(comment, '') FROM duckdb_views() WHERE NOT internal "
                "ORDER BY view_name").fetchall())
        for view_name, description in listed:
            click.echo(f"{view_name:28s} {description}")
            if show_sql and view_name in views:
                click.echo(views[view_name].sql)
        return
    description, columns = _with_warehouse(db_path, lambda con: _describe(con, name))
    click.echo(f"{name}: {description or '(no description stored)'}")
    width = max((len(c) for c, _, _ in columns), default=0)
    for column, type_, comment in columns:
        click.echo(f"  {column:{width}s}  {type_:12s}  {comment or ''}".rstrip())
    if show_sql and name in views:
        click.echo(views[name].sql)
