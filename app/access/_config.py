"""Dashboard settings, read from the environment that `trajscope app` sets for the Streamlit server."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from warehouse import default_db_path

ENV_MAX_UPLOAD_MB = "TRAJSCOPE_APP_MAX_UPLOAD_MB"
ENV_SQL_TIMEOUT_S = "TRAJSCOPE_APP_SQL_TIMEOUT_S"
ENV_SQL_ROW_CAP = "TRAJSCOPE_APP_SQL_ROW_CAP"
ENV_LOCK_WAIT_S = "TRAJSCOPE_APP_LOCK_WAIT_S"


@dataclass(frozen=True)
class AppConfig:
    """Where the warehouse is and the limits the pages enforce."""

    db_path: Path
    max_upload_mb: int = 200
    sql_timeout_s: float = 10.0
    sql_row_cap: int = 10_000
    lock_wait_s: float = 15.0


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
        lock_wait_s=float(_number(ENV_LOCK_WAIT_S, 15.0, float)),
    )
