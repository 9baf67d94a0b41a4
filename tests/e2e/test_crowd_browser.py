"""A crowd of real tabs in headless Chromium against `trajscope app`: 20 tabs open /sql at once and press Run,
10 open the Overview at once. No tab shows an exception ("Cannot change configuration option ... the
configuration has been locked" in 19 of 20 before), every Run gets its rows, and the query workers running
at once, counted in /proc while the crowd runs, never pass the server's cap."""
from __future__ import annotations

import os
import sys
import threading
import urllib.parse
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "fixtures" / "app"))

from app_fixture_records import app_trajectories  # noqa: E402
from browser_support import assert_no_exception, headless_chromium, serve_dashboard, settle  # noqa: E402

pytestmark = pytest.mark.slow

CAP = 3  # $TRAJSCOPE_MAX_QUERY_WORKERS for this server: below the crowd, so the cap has to hold
SQL_TABS, OVERVIEW_TABS = 20, 10
N = 30_000_000
QUERY = f"SELECT count(*) AS n FROM range({N}) t(i) WHERE i % 7 = 3"  # about a second: the presses overlap
WORKER_MARK = b"warehouse.read._worker import main"


class WorkerCounter:
    """Samples /proc every 20 ms for query workers whose working directory is under this server's read tmp."""

    def __init__(self, read_tmp: Path):
        self.read_tmp = str(read_tmp.resolve())
        self.peak = 0
        self.samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _count(self) -> int:
        n = 0
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                if WORKER_MARK in (entry / "cmdline").read_bytes() and \
                        os.readlink(entry / "cwd").startswith(self.read_tmp):
                    n += 1
            except OSError:
                continue
        return n

    def _run(self) -> None:
        while not self._stop.wait(0.02):
            self.peak = max(self.peak, self._count())
            self.samples += 1

    def __enter__(self) -> WorkerCounter:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


@pytest.fixture(scope="module")
def crowd(tmp_path_factory):
    from trajscope.warehouse import ingest_trajectories

    folder = tmp_path_factory.mktemp("crowd")
    db = folder / "wh.duckdb"
    ingest_trajectories(db, app_trajectories())
    read_tmp = folder / "read-tmp"
    read_tmp.mkdir()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TRAJSCOPE_MAX_QUERY_WORKERS", str(CAP))
        patch.setenv("TRAJSCOPE_READ_TMP", str(read_tmp))
        patch.setenv("TRAJSCOPE_APP_LOCK_WAIT_S", "300")  # a loaded machine: a press waits for a slot
        with serve_dashboard(db) as url, headless_chromium() as browser:
            yield url, browser, read_tmp


def _open_at_once(browser, url: str, n: int) -> list:
    # Every tab starts loading before any is waited for: the loads overlap as a crowd's do.
    pages = [browser.new_page(viewport={"width": 1300, "height": 1200}) for _ in range(n)]
    for page in pages:
        page.goto(url, wait_until="commit", timeout=120_000)
    return pages


def _no_locked_configuration(page, name: str) -> None:
    text = page.inner_text("body")
    assert "has been locked" not in text and "Cannot change configuration" not in text, f"{name}: {text[:500]}"


def test_twenty_sql_tabs_pressing_run_at_once(crowd):
    url, browser, read_tmp = crowd
    pages = _open_at_once(browser, f"{url}/sql?sql={urllib.parse.quote(QUERY)}", SQL_TABS)
    try:
        for k, page in enumerate(pages):
            page.get_by_role("button", name="Run query").wait_for(timeout=180_000)
            assert_no_exception(page, f"sql tab {k} on load")
            _no_locked_configuration(page, f"sql tab {k} on load")
        with WorkerCounter(read_tmp) as counter:
            for page in pages:  # twenty presses in a burst, none waited for
                page.get_by_role("button", name="Run query").click()
            for k, page in enumerate(pages):
                page.get_by_text("1 row(s)").wait_for(timeout=300_000)
                settle(page)
                assert_no_exception(page, f"sql tab {k} after Run")
                _no_locked_configuration(page, f"sql tab {k} after Run")
                assert page.locator('[data-testid="stAlert"]').filter(has_text="Stopped").count() == 0
        print(f"query workers at once: peak {counter.peak} (cap {CAP}) over {counter.samples} samples")
        assert counter.samples > 0 and 1 <= counter.peak <= CAP, (counter.peak, counter.samples)
        assert list(read_tmp.glob("trajscope-read-*-*")) == [], "a worker's folder was left behind"
    finally:
        for page in pages:
            page.close()


def test_ten_overview_tabs_at_once(crowd):
    url, browser, _ = crowd
    pages = _open_at_once(browser, f"{url}/", OVERVIEW_TABS)
    try:
        for k, page in enumerate(pages):
            page.get_by_role("heading", name="Overview", exact=True).first.wait_for(timeout=180_000)
            settle(page)
            assert_no_exception(page, f"overview tab {k}")
            _no_locked_configuration(page, f"overview tab {k}")
    finally:
        for page in pages:
            page.close()
