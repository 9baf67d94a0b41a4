"""A crowd of tabs: 20 pages loading at once, and 20 tabs pressing Run in the SQL console at once, end with no
exception ("the configuration has been locked" before), and no more query workers run than the cap."""
from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from security_limits import fingerprint
from streamlit.testing.v1 import AppTest

import trajscope.warehouse.read._query as query_module
from trajscope.app.access import read_connection, run_queries, warehouse_state
from trajscope.app.console import run_console_query

PAGES = Path(__file__).parents[2] / "app" / "page_scripts"
CROWD = 20


def _load(script: str) -> list[str]:
    # Through the app's navigation, as a browser opens a page: the Overview links to pages that only
    # st.navigation registers, so a page script run on its own cannot resolve them.
    page = AppTest.from_file(str(PAGES.parent / "main.py"), default_timeout=300).run()
    if script != "overview":
        page.switch_page(f"page_scripts/{script}.py").run()
    return [e.message for e in page.exception] + [e.value for e in page.error]


def _crowd(fn, *args) -> list:
    with ThreadPoolExecutor(CROWD) as pool:
        return list(pool.map(lambda _: fn(*args), range(CROWD)))


@pytest.fixture
def app_env(warehouse_db, monkeypatch):
    monkeypatch.setenv("TRAJSCOPE_DB", str(warehouse_db))
    monkeypatch.setenv("TRAJSCOPE_APP_LOCK_WAIT_S", "120")  # a loaded test machine: wait, do not refuse
    return warehouse_db


def _page_load(db: Path) -> list[str]:
    # What a page load does with the warehouse (app.ui: require_warehouse, fetch / fetch_many, and the
    # Compare / Report / Audit pages' read_connection), each on its own connection as a tab's thread does.
    try:
        state = warehouse_state(db)
        results = run_queries(db, {"runs": "SELECT * FROM run_summary", "schema": SCHEMA_SQL})
        with read_connection(db) as con:
            con.execute("SELECT count(*) FROM trajectories").fetchall()
        assert state.n_trajectories == 10 and results["runs"].df.height == 3
    except Exception as exc:  # noqa: BLE001 - every failure is collected and shown
        return [f"{type(exc).__name__}: {exc}"]
    return []


SCHEMA_SQL = "SELECT view_name FROM duckdb_views() WHERE NOT internal"


def test_twenty_concurrent_page_loads_all_succeed(app_env, baseline):
    # The failure this guards against: "Cannot change configuration option enable_progress_bar - the configuration
    # has been locked", when a later connection's SET meets the shared database instance already locked.
    barrier = threading.Barrier(CROWD)

    def load() -> list[str]:
        barrier.wait()
        return _page_load(app_env)

    problems = _crowd(load)
    assert problems == [[]] * CROWD, [p for p in problems if p][:3]
    assert fingerprint(app_env) == baseline


@pytest.mark.slow
@pytest.mark.parametrize("script", sorted(p.stem for p in PAGES.glob("*.py") if p.stem != "upload"))
def test_every_page_renders_after_a_crowd_of_loads(script, app_env, baseline):
    # Streamlit's AppTest is not thread-safe (one Runtime per process): the crowd runs the pages' reads
    # above, then each page renders under AppTest against the same process-wide DuckDB instance.
    assert _crowd(_page_load, app_env) == [[]] * CROWD
    assert _load(script) == []
    assert fingerprint(app_env) == baseline


def test_twenty_tabs_pressing_run_get_results_with_workers_capped(app_env, baseline, monkeypatch):
    running, peak, lock = 0, 0, threading.Lock()
    real = query_module._run_worker

    def counted(*args, **kwargs):
        nonlocal running, peak
        with lock:
            running += 1
            peak = max(peak, running)
        try:
            return real(*args, **kwargs)
        finally:
            with lock:
                running -= 1

    monkeypatch.setattr(query_module, "_run_worker", counted)

    barrier = threading.Barrier(CROWD)

    def press_run(k: int) -> tuple[list[str], int]:
        # What the console's Run does: run_console_query, a query worker per press.
        barrier.wait()
        try:
            result = run_console_query(app_env, f"SELECT {k} AS k, count(*) AS n FROM trajectories", timeout_s=30,
                                       row_cap=10, lock_wait_s=120)
        except Exception as exc:  # noqa: BLE001 - every failure is collected and shown
            return [f"{type(exc).__name__}: {exc}"], -1
        return [], result.df.row(0)[1]

    with ThreadPoolExecutor(CROWD) as pool:
        results = list(pool.map(press_run, range(CROWD)))
    assert results == [([], 10)] * CROWD, [r for r in results if r[0]][:3]
    assert 1 <= peak <= query_module.MAX_WORKERS
    assert fingerprint(app_env) == baseline


def test_a_query_past_the_worker_slots_is_refused_in_one_line(warehouse_db, monkeypatch):
    from trajscope.warehouse import ReadLimits, run_read_query

    monkeypatch.setattr(query_module, "_worker_slots", threading.BoundedSemaphore(1))
    assert query_module._worker_slots.acquire()  # the one slot is taken
    try:
        with pytest.raises(query_module.QueryWorkersBusy, match=r"busy: \d+ queries are already running"):
            run_read_query(warehouse_db, "SELECT 1", limits=ReadLimits(lock_wait_s=0.2))
    finally:
        query_module._worker_slots.release()
