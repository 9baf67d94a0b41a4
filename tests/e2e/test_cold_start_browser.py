"""Twelve different pages opened at once on a freshly started `trajscope app`, ten times over: no page shows an
exception. Each page's first run imports the libraries it draws with; run at once on a cold server, those imports
raced ("partially initialized module 'pandas' has no attribute 'Timestamp'")."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "fixtures" / "app"))

from app_fixture_records import app_trajectories  # noqa: E402
from browser_support import PAGES, headless_chromium, serve_dashboard, settle  # noqa: E402

pytestmark = pytest.mark.slow

TRIALS = 10
COLD_PAGES = [*PAGES, ("funnel", "Evidence funnel")]


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory) -> Path:
    from trajscope.warehouse import ingest_trajectories

    db = tmp_path_factory.mktemp("cold") / "wh.duckdb"
    ingest_trajectories(db, app_trajectories())
    return db


def _exceptions(page, path: str) -> list[str]:
    """The exception boxes a page shows, and an import error a page caught and showed as a message."""
    boxes = page.locator('[data-testid="stException"]')
    shown = [f"/{path}: {boxes.nth(k).inner_text()[:300]!r}" for k in range(boxes.count())]
    body = page.inner_text("body")
    return shown + [f"/{path}: {body[:300]!r}" for marker in ("partially initialized", "ImportError")
                    if marker in body and not shown]


def test_twelve_pages_at_once_on_a_cold_server_show_no_exception(warehouse):
    assert len({path for path, _ in COLD_PAGES}) == 12
    shown: list[str] = []
    loads = 0
    with headless_chromium() as browser:
        for trial in range(TRIALS):
            with serve_dashboard(warehouse) as url:  # a fresh server: no page has run in it yet
                context = browser.new_context(viewport={"width": 1300, "height": 1000})
                tabs = [(context.new_page(), path, heading) for path, heading in COLD_PAGES]
                for tab, path, _ in tabs:  # every tab starts loading before any is waited for
                    tab.goto(f"{url}/{path}", wait_until="commit", timeout=120_000)
                for tab, path, heading in tabs:
                    heading_or_exception = tab.get_by_role("heading", name=heading, exact=True).or_(
                        tab.locator('[data-testid="stException"]'))
                    heading_or_exception.first.wait_for(timeout=180_000)
                    settle(tab)
                    shown += [f"trial {trial} {line}" for line in _exceptions(tab, path)]
                    loads += 1
                context.close()
    assert loads == TRIALS * 12
    assert shown == [], f"{len(shown)} exception(s) in {loads} cold loads:\n" + "\n".join(shown)
