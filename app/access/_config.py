"""Dashboard settings, read from the environment that `trajscope app` sets for the Streamlit server."""
from __future__ import annotations

import os
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

from trajscope.warehouse import CONSOLE_LIMITS, PAGE_LIMITS, ReadLimits, default_db_path

ENV_MAX_UPLOAD_MB = "TRAJSCOPE_APP_MAX_UPLOAD_MB"
ENV_SQL_TIMEOUT_S = "TRAJSCOPE_APP_SQL_TIMEOUT_S"
ENV_SQL_ROW_CAP = "TRAJSCOPE_APP_SQL_ROW_CAP"
ENV_SQL_MAX_MB = "TRAJSCOPE_APP_SQL_MAX_MB"
ENV_PAGE_TIMEOUT_S = "TRAJSCOPE_APP_PAGE_TIMEOUT_S"
ENV_MEMORY_MB = "TRAJSCOPE_APP_MEMORY_MB"
ENV_TEMP_MB = "TRAJSCOPE_APP_TEMP_MB"
ENV_LOCK_WAIT_S = "TRAJSCOPE_APP_LOCK_WAIT_S"
# `trajscope app --lake`: the lake whose latest snapshot every run reads (its catalog replaces $TRAJSCOPE_DB).
ENV_LAKE = "TRAJSCOPE_APP_LAKE"

# The pages' own queries: most rows a page (the Export preview included) may fetch.
PAGE_ROW_CAP = PAGE_LIMITS.max_rows
# Every number below comes from the read path's one table of limit defaults (warehouse.read.DEFAULTS):
# the console column for SQL a user types, the page column for the pages' own queries.


@dataclass(frozen=True)
class AppConfig:
    """Where the warehouse is and the limits the pages enforce."""

    db_path: Path
    max_upload_mb: int = 200
    sql_timeout_s: float = CONSOLE_LIMITS.timeout_s  # console and Export filter: well under ingest's lock wait
    sql_row_cap: int = CONSOLE_LIMITS.max_rows
    sql_max_mb: float = CONSOLE_LIMITS.max_result_mb  # console and Export results, in Arrow bytes
    page_timeout_s: float = PAGE_LIMITS.timeout_s  # the pages' own queries
    memory_limit_mb: int = CONSOLE_LIMITS.memory_limit_mb
    max_temp_mb: int = CONSOLE_LIMITS.max_temp_mb
    lock_wait_s: float = CONSOLE_LIMITS.lock_wait_s

    def console_limits(self, *, max_rows: int | None = None) -> ReadLimits:
        """Limits of SQL a user typed (console, Export filter): run in a memory-bounded query worker."""
        return CONSOLE_LIMITS.with_overrides(
            timeout_s=self.sql_timeout_s, max_rows=max_rows or self.sql_row_cap, max_result_mb=self.sql_max_mb,
            memory_limit_mb=self.memory_limit_mb, max_temp_mb=self.max_temp_mb, lock_wait_s=self.lock_wait_s)

    def page_limits(self) -> ReadLimits:
        """Limits of the pages' own queries, on in-process connections that share one DuckDB configuration."""
        # A page never gets a smaller result budget than the console it links to.
        return PAGE_LIMITS.with_overrides(
            timeout_s=self.page_timeout_s, max_result_mb=max(self.sql_max_mb, PAGE_LIMITS.max_result_mb),
            memory_limit_mb=self.memory_limit_mb, max_temp_mb=self.max_temp_mb, lock_wait_s=self.lock_wait_s)


def _number(name: str, default: float, cast: type) -> float:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = cast(raw)
    except ValueError:
        raise ValueError(f"${name}={raw!r} is not a number") from None
    if value <= 0:
        raise ValueError(f"${name} must be positive, got {raw!r}")
    return value


def served_lake() -> Path | str | None:
    """The lake the dashboard serves ($TRAJSCOPE_APP_LAKE: a folder, or an object storage URL), else None."""
    raw = os.environ.get(ENV_LAKE)
    if not raw:
        return None
    return raw if "://" in raw else Path(raw)


def _db_path(building: Callable[[], AbstractContextManager] | None) -> Path:
    lake = served_lake()
    if lake is None:
        return default_db_path()
    from trajscope.warehouse.lake import lake_catalog

    # Re-resolved on every run: a writer's commit gives a new snapshot, whose catalog the next run builds and reads.
    return lake_catalog(lake, building=building)


def load_config(building: Callable[[], AbstractContextManager] | None = None) -> AppConfig:
    """Settings from $TRAJSCOPE_DB (or the catalog of $TRAJSCOPE_APP_LAKE's latest snapshot, built inside
    `building()` when it is new) and $TRAJSCOPE_APP_* (AppConfig's defaults otherwise)."""
    d = AppConfig(db_path=_db_path(building))
    return AppConfig(
        db_path=d.db_path,
        max_upload_mb=int(_number(ENV_MAX_UPLOAD_MB, d.max_upload_mb, int)),
        sql_timeout_s=float(_number(ENV_SQL_TIMEOUT_S, d.sql_timeout_s, float)),
        sql_row_cap=int(_number(ENV_SQL_ROW_CAP, d.sql_row_cap, int)),
        sql_max_mb=float(_number(ENV_SQL_MAX_MB, d.sql_max_mb, float)),
        page_timeout_s=float(_number(ENV_PAGE_TIMEOUT_S, d.page_timeout_s, float)),
        memory_limit_mb=int(_number(ENV_MEMORY_MB, d.memory_limit_mb, int)),
        max_temp_mb=int(_number(ENV_TEMP_MB, d.max_temp_mb, int)),
        lock_wait_s=float(_number(ENV_LOCK_WAIT_S, d.lock_wait_s, float)),
    )
