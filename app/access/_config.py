"""Dashboard settings, read from the environment that `trajscope app` sets for the Streamlit server."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from warehouse import ReadLimits, default_db_path

ENV_MAX_UPLOAD_MB = "TRAJSCOPE_APP_MAX_UPLOAD_MB"
ENV_SQL_TIMEOUT_S = "TRAJSCOPE_APP_SQL_TIMEOUT_S"
ENV_SQL_ROW_CAP = "TRAJSCOPE_APP_SQL_ROW_CAP"
ENV_SQL_MAX_MB = "TRAJSCOPE_APP_SQL_MAX_MB"
ENV_PAGE_TIMEOUT_S = "TRAJSCOPE_APP_PAGE_TIMEOUT_S"
ENV_MEMORY_MB = "TRAJSCOPE_APP_MEMORY_MB"
ENV_TEMP_MB = "TRAJSCOPE_APP_TEMP_MB"
ENV_LOCK_WAIT_S = "TRAJSCOPE_APP_LOCK_WAIT_S"

# The pages' own queries: most rows a page (the Export preview included) may fetch.
PAGE_ROW_CAP = 1_000_000


@dataclass(frozen=True)
class AppConfig:
    """Where the warehouse is and the limits the pages enforce."""

    db_path: Path
    max_upload_mb: int = 200
    sql_timeout_s: float = 10.0  # console and Export filter: well under ingest's 60 s lock wait
    sql_row_cap: int = 10_000
    sql_max_mb: float = 64.0  # console and Export results, in Arrow bytes
    page_timeout_s: float = 30.0  # the pages' own queries
    memory_limit_mb: int = 1024
    max_temp_mb: int = 1024
    lock_wait_s: float = 15.0

    def console_limits(self, *, max_rows: int | None = None) -> ReadLimits:
        """Limits of SQL a user typed (console, Export filter): run in a memory-bounded query worker."""
        return ReadLimits(timeout_s=self.sql_timeout_s, max_rows=max_rows or self.sql_row_cap,
                          max_result_mb=self.sql_max_mb, memory_limit_mb=self.memory_limit_mb,
                          max_temp_mb=self.max_temp_mb, lock_wait_s=self.lock_wait_s)

    def page_limits(self) -> ReadLimits:
        """Limits of the pages' own queries, on in-process connections that share one DuckDB configuration."""
        return ReadLimits(timeout_s=self.page_timeout_s, max_rows=PAGE_ROW_CAP,
                          max_result_mb=max(self.sql_max_mb, 256.0), memory_limit_mb=self.memory_limit_mb,
                          max_temp_mb=self.max_temp_mb, lock_wait_s=self.lock_wait_s)


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


def load_config() -> AppConfig:
    """Settings from $TRAJSCOPE_DB and $TRAJSCOPE_APP_* (defaults otherwise)."""
    return AppConfig(
        db_path=default_db_path(),
        max_upload_mb=int(_number(ENV_MAX_UPLOAD_MB, 200, int)),
        sql_timeout_s=float(_number(ENV_SQL_TIMEOUT_S, 10.0, float)),
        sql_row_cap=int(_number(ENV_SQL_ROW_CAP, 10_000, int)),
        sql_max_mb=float(_number(ENV_SQL_MAX_MB, 64.0, float)),
        page_timeout_s=float(_number(ENV_PAGE_TIMEOUT_S, 30.0, float)),
        memory_limit_mb=int(_number(ENV_MEMORY_MB, 1024, int)),
        max_temp_mb=int(_number(ENV_TEMP_MB, 1024, int)),
        lock_wait_s=float(_number(ENV_LOCK_WAIT_S, 15.0, float)),
    )
