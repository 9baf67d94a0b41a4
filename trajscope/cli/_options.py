"""Options and the read-only query shared by several subcommands."""
from __future__ import annotations

import functools

import click

from trajscope.api import statistics_limits  # noqa: F401 - compare and report read with these limits
from trajscope.warehouse import DEFAULT_LIMITS, default_db_path

db_option = click.option(
    "--db",
    "db_path",
    type=click.Path(dir_okay=False),
    default=lambda: str(default_db_path()),
    show_default="$TRAJSCOPE_DB or ./trajscope.duckdb",
    help="Path of the DuckDB warehouse file.",
)

class LakeLocation(click.ParamType):
    """A lake folder, or an object storage URL (s3://bucket/lake, gs://..., file://...) taken as written."""

    name = "DIR|URL"

    def __init__(self, exists: bool):
        self.folder = click.Path(file_okay=False, exists=exists)

    def convert(self, value, param, ctx):
        if "://" in str(value):
            return str(value)
        return self.folder.convert(value, param, ctx)


lake_option = click.option(
    "--lake", "lake", type=LakeLocation(exists=True), default=None,
    help="Read this lake (trajscope lake: a folder, or an object storage URL read through a local mirror) instead "
         "of --db: the same named views and sandbox, over its Parquet files.")


def lake_db(lake: str | None, db_path: str) -> str:
    """The warehouse file to read: --db, or the local catalog of --lake (built when out of date)."""
    if not lake:
        return db_path
    from trajscope.warehouse.lake import LakeError, lake_catalog

    try:
        return str(lake_catalog(lake))
    except LakeError as exc:
        raise click.ClickException(str(exc)) from None


# Each read limit's flag: a flag raises (or lowers) a limit, and none can switch one off.
LIMIT_FLAGS = {
    "timeout_s": "--timeout",
    "max_rows": "--max-rows",
    "max_result_mb": "--max-result-mb",
    "memory_limit_mb": "--memory-limit-mb",
    "max_temp_mb": "--max-temp-mb",
    "threads": "--threads",
}


def read_limit_options(*, max_rows_default: int = DEFAULT_LIMITS.max_rows,
                       max_rows_help: str = "Row cap: most rows the query returns."):
    """The read path's limits as flags; the command receives them as one ReadLimits named `limits`."""
    d = DEFAULT_LIMITS
    options = [
        click.option("--timeout", "timeout_s", type=click.FloatRange(0.1, 86_400), default=d.timeout_s,
                     show_default=True, help="Seconds before the query is interrupted."),
        click.option("--max-rows", "max_rows", type=click.IntRange(1, 100_000_000), default=max_rows_default,
                     show_default=True, help=max_rows_help),
        click.option("--max-result-mb", type=click.FloatRange(0.01, 1_000_000), default=d.max_result_mb,
                     show_default=True, help="Largest result (Arrow bytes, counted while fetching)."),
        click.option("--memory-limit-mb", type=click.IntRange(16, 1_000_000), default=d.memory_limit_mb,
                     show_default=True, help="DuckDB memory limit; the query worker's memory is bounded too."),
        click.option("--max-temp-mb", type=click.IntRange(1, 10_000_000), default=d.max_temp_mb,
                     show_default=True, help="Temp disk a query may spill to (removed afterwards)."),
        click.option("--threads", type=click.IntRange(1, 1024), default=d.threads, show_default=True,
                     help="DuckDB threads for the query."),
    ]

    def decorate(command):
        @functools.wraps(command)
        def wrapped(*args, timeout_s, max_rows, max_result_mb, memory_limit_mb, max_temp_mb, threads, **kwargs):
            limits = DEFAULT_LIMITS.with_overrides(
                timeout_s=timeout_s, max_rows=max_rows, max_result_mb=max_result_mb,
                memory_limit_mb=memory_limit_mb, max_temp_mb=max_temp_mb, threads=threads,
            )
            return command(*args, limits=limits, **kwargs)

        for option in reversed(options):
            wrapped = option(wrapped)
        return wrapped

    return decorate


timeout_option = click.option(
    "--timeout", "timeout_s", type=click.FloatRange(0.1, 86_400), default=DEFAULT_LIMITS.timeout_s,
    show_default=True, help="Seconds the warehouse queries may run before they are interrupted.",
)


def read_failure(exc: Exception) -> click.ClickException:
    """A one-line CLI error for anything the read path refused, naming the flag of a limit that was hit."""
    from trajscope.warehouse import ForbiddenStatement, LimitExceeded

    message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    if isinstance(exc, ForbiddenStatement):
        message = f"refused: {message}"
    if isinstance(exc, LimitExceeded) and exc.limit in LIMIT_FLAGS:
        message += f" (raise it with {LIMIT_FLAGS[exc.limit]})"
    return click.ClickException(message)


def read_frame(db_path: str, query: str, limits):
    """Run one user query through the read path (warehouse.run_read_query); failures become CLI errors."""
    from trajscope.warehouse import ReadRefused, WarehouseBusy, WarehouseMissing, run_read_query

    try:
        return run_read_query(db_path, query, limits=limits)
    except (WarehouseMissing, WarehouseBusy, ReadRefused) as exc:
        raise read_failure(exc) from None
