"""Running a page's query with the user-facing handling of a missing, busy or outdated warehouse."""
from __future__ import annotations

import duckdb
import streamlit as st

from app.access import QueryResult, WarehouseState, run_queries, run_query, warehouse_state
from warehouse import WarehouseBusy, WarehouseMissing

from ._layout import app_config
from ._notices import fill_warehouse_help


def fetch(sql: str) -> QueryResult | None:
    """Run sql on a fresh read-only connection; on failure show a one-line reason and return None."""
    config = app_config()
    try:
        return run_query(config.db_path, sql, lock_wait_s=config.lock_wait_s)
    except WarehouseMissing:
        fill_warehouse_help(config, exists=False)
    except WarehouseBusy as exc:
        st.warning(f"{exc}", icon=":material/hourglass_top:")
    except duckdb.Error as exc:
        st.error(f"The warehouse query failed: {str(exc).splitlines()[0]}", icon=":material/warning:")
        st.code(sql, language="sql")
    return None


def fetch_many(named_sql: dict[str, str]) -> dict[str, QueryResult] | None:
    """Run several queries on one short connection; on failure show why and return None."""
    config = app_config()
    try:
        return run_queries(config.db_path, named_sql, lock_wait_s=config.lock_wait_s)
    except WarehouseMissing:
        fill_warehouse_help(config, exists=False)
    except WarehouseBusy as exc:
        st.warning(f"{exc}", icon=":material/hourglass_top:")
    except duckdb.Error as exc:
        st.error(f"A warehouse query failed: {str(exc).splitlines()[0]}", icon=":material/warning:")
    return None


def require_warehouse() -> WarehouseState | None:
    """The warehouse's state when it holds trajectories; otherwise show how to fill it and return None."""
    config = app_config()
    try:
        state = warehouse_state(config.db_path, lock_wait_s=config.lock_wait_s)
    except WarehouseBusy as exc:
        st.warning(f"{exc}", icon=":material/hourglass_top:")
        return None
    if state.empty:
        fill_warehouse_help(config, exists=state.exists)
        return None
    return state
