"""`trajscope export-traces`: a run's trajectories as OpenInference / OTel GenAI spans, ATIF or an Inspect log."""
from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import click

from ._options import db_option

_FORMATS = ("openinference", "otel-genai", "atif", "inspect")


def trajscope_version() -> str:
    """The installed trajscope version ('unknown' when running from a source tree without metadata)."""
    try:
        return version("trajscope")
    except PackageNotFoundError:
        return "unknown"


@click.command("export-traces")
@click.argument("run_id")
@db_option
@click.option("--format", "fmt", type=click.Choice(_FORMATS), required=True,
              help="openinference / otel-genai: OTLP JSON spans (JSONL, one trace per line); atif: ATIF v1.4 "
                   "(JSONL); inspect: an Inspect AI eval log (.json).")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True, help="Output file.")
def command(run_id: str, db_path: str, fmt: str, out: Path) -> None:
    """Write RUN's trajectories in a format peers read, with question id, gold, verdicts and labels.

    Each trajectory also carries trajscope's own record (attribute / metadata `trajscope.export`), so
    `trajscope ingest FILE --run-id RUN` gives back the same steps, ids, gold and verdicts.

    Example: trajscope export-traces demo:read_gate/full --format openinference --out full.otlp.jsonl
    """
    import duckdb

    from trajscope.ingest.exporters import EXPORT_FORMATS, export_file
    from trajscope.warehouse import ReadRefused, WarehouseBusy, WarehouseMissing, open_read
    from trajscope.warehouse.export import RunNotFound, check_output_path, exported_trajectories, source_logs

    # never the warehouse, its WAL or a log it was built from (the only way to rebuild it), by any link
    check_output_path(out, db=db_path, reading=source_logs(db_path))
    try:
        with open_read(db_path) as con:
            n = export_file(exported_trajectories(con, run_id), fmt, out, version=trajscope_version())
    except (WarehouseMissing, WarehouseBusy, ReadRefused, RunNotFound) as exc:
        raise click.ClickException(str(exc)) from None
    except duckdb.Error as exc:
        raise click.ClickException(f"{db_path}: query failed: {exc}") from None
    except OSError as exc:
        raise click.ClickException(f"{out}: cannot write: {exc}") from None
    back = EXPORT_FORMATS[fmt].import_format
    click.echo(f"{out}: {n} trajectories of {run_id} ({fmt}); read back with "
               f"`trajscope ingest {out} --format {back} --run-id {run_id}`")
