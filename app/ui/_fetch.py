"""Running a page's query with the user-facing handling of a missing, busy or outdated warehouse."""
from __future__ import annotations

from pathlib import Path

import duckdb
import streamlit as st

from trajscope.app.access import QueryResult, WarehouseState, run_queries, warehouse_state
from trajscope.warehouse import LimitExceeded, NotAWarehouse, ReadRefused, WarehouseBusy, WarehouseMissing

from ._layout import app_config
from ._notices import fill_warehouse_help, show_error


def warehouse_stamp(db_path: Path) -> tuple[int, ...]:
    """Changes whenever the warehouse file (or its write-ahead log) is written."""
    stamp: list[int] = []
    for path in (db_path, db_path.with_name(db_path.name + ".wal")):
        info = path.stat() if path.exists() else None
        stamp += [info.st_mtime_ns, info.st_size] if info else [0, 0]
    return tuple(stamp)


@st.cache_data(max_entries=256, show_spinner=False)
def _cached(db_path: str, stamp: tuple[int, ...], named_sql: tuple[tuple[str, str], ...],
            lock_wait_s: float) -> dict[str, QueryResult]:
    # Keyed on the warehouse's stamp, so an ingest invalidates every cached result at once.
    return run_queries(db_path, dict(named_sql), lock_wait_s=lock_wait_s, limits=app_config().page_limits())


def cached_queries(named_sql: dict[str, str]) -> dict[str, QueryResult]:
    """Run (or reuse, while the warehouse is unchanged) several queries on one short connection."""
    config = app_config()
    return _cached(str(config.db_path), warehouse_stamp(config.db_path), tuple(named_sql.items()),
                   config.lock_wait_s)


def fetch(sql: str) -> QueryResult | None:
    """Run sql on a fresh read-only connection; on failure show a one-line reason and return None."""
    results = _shown_failures({"q": sql}, "The warehouse query failed", failed_sql=sql)
    return results["q"] if results is not None else None


def fetch_many(named_sql: dict[str, str]) -> dict[str, QueryResult] | None:
    """Run several queries on one short connection; on failure show why and return None."""
    return _shown_failures(named_sql, "A warehouse query failed")


def _shown_failures(named_sql: dict[str, str], failed: str, *,
                    failed_sql: str | None = None) -> dict[str, QueryResult] | None:
    # The one place a page's query failure (missing, busy, or a DuckDB error) becomes a notice.
    try:
        results = cached_queries(named_sql)
        for result in results.values():
            if result.truncated:  # never a silent cut: the page's numbers cover the first rows only
                st.warning(f"A query of this page returned more than {len(result.df):,} rows (the page row cap); "
                           "what it shows covers the first rows only.", icon=":material/content_cut:")
        return results
    except WarehouseMissing:
        fill_warehouse_help(app_config(), exists=False)
    except WarehouseBusy as exc:
        st.warning(f"{exc}", icon=":material/hourglass_top:")
    except LimitExceeded as exc:
        show_error(f"{failed}: {exc}", icon=":material/timer:")
    except (ReadRefused, duckdb.Error) as exc:
        # ReadRefused covers NotAWarehouse and a refused statement; DuckDB errors are one line, no paths.
        show_error(f"{failed}: {str(exc).splitlines()[0]}", icon=":material/warning:")
        if failed_sql is not None and not isinstance(exc, NotAWarehouse):
            st.code(failed_sql, language="sql")
    return None


def require_warehouse() -> WarehouseState | None:
    """The warehouse's state when it holds trajectories; otherwise show how to fill it and return None."""
    config = app_config()
    try:
        state = warehouse_state(config.db_path, lock_wait_s=config.lock_wait_s)
    except WarehouseBusy as exc:
        st.warning(f"{exc}", icon=":material/hourglass_top:")
        return None
    except ReadRefused as exc:
        show_error(str(exc), icon=":material/warning:")
        return None
    if state.empty:
        fill_warehouse_help(config, exists=state.exists)
        return None
    return state
