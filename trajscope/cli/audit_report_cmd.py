"""`trajscope audit-report`: the answer-presence audit's paper-style tables."""
from __future__ import annotations

from pathlib import Path

import click

from trajscope.analysis.report import AUDIT_TABLES, FORMATS

from ._options import read_failure, timeout_option


@click.command("audit-report")
@click.option("--db", type=click.Path(dir_okay=False), default=None,
              help="Warehouse (default $TRAJSCOPE_DB or ./trajscope.duckdb).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="markdown", show_default=True)
@click.option("--table", "tables", multiple=True, type=click.Choice(list(AUDIT_TABLES)),
              help="Only these tables (repeatable; default: all, in report order).")
@click.option("--out", type=click.Path(dir_okay=False), default=None, help="Write to a file instead of stdout.")
@timeout_option
def command(db: str | None, fmt: str, tables: tuple[str, ...], out: str | None, timeout_s: float) -> None:
    """Print the audit tables: cells, transition buckets, the causal delta on 1->1 (remove vs
    placebo), insertion on 0->0, the sentinel panel with C2a / C2b verdicts, the identity check,
    the alias spot-check and every per-intervention delta, with 95% bootstrap CIs (seed 42). The causal
    and sentinel tables are `trajscope report audit`'s Tables 1 and 2.

    \b
    Example:
      trajscope audit-report --db demo.duckdb --format latex --table causal --table sentinels
    """
    from trajscope.analysis.report import audit_tables, render_all
    from trajscope.warehouse import (
        DEFAULT_LIMITS,
        ReadRefused,
        WarehouseBusy,
        WarehouseMissing,
        default_db_path,
        open_read,
    )
    from trajscope.warehouse.export import check_output_path, write_output

    path = Path(db) if db else default_db_path()
    if out:
        check_output_path(out, db=path)
    try:
        # The read path brings an older warehouse (no audit tables yet) up to date first; each query is
        # checked and stopped at the time limit.
        with open_read(path, limits=DEFAULT_LIMITS.with_overrides(timeout_s=timeout_s)) as con:
            n = con.execute("SELECT count(*) FROM audit_records").fetchall()[0][0]
            if n == 0:
                raise click.ClickException(
                    f"{path}: no audit records yet; run `trajscope audit --dataset ... --db {path}` "
                    f"or load records with `trajscope audit --import FILE --db {path}`"
                )
            text = render_all(list(audit_tables(con, tables, db_path=path).values()), fmt)
    except (WarehouseMissing, WarehouseBusy, ReadRefused) as exc:
        raise read_failure(exc) from None
    if out:
        write_output(out, text, db=path)
        click.echo(f"wrote {out}")
    else:
        click.echo(text, nl=False)
