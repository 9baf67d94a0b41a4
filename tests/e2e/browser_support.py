"""What the browser tests share: the dashboard served on a free port, headless Chromium, and page checks."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
PAGES = [  # url path (the default page, Overview, lives at /), a heading the page must show
    ("", "Overview"), ("runs", "Runs"), ("failure_plane", "Failure plane"), ("breakdowns", "Breakdowns"),
    ("replay", "Trajectory replay"), ("compare", "Compare"), ("audit", "Intervention audit"),
    ("upload", "Upload"), ("sql", "SQL console"), ("export", "Export"), ("search", "Search"),
]


def free_port() -> int:
    """A loopback port that was free a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def serve_dashboard(db: Path) -> Iterator[str]:
    """`trajscope app --db db` on a free port until the block ends; yields its root URL."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "trajscope", "app", "--db", str(db), "--port", str(port)],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env={**os.environ},
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).status == 200:
                break
        except OSError:
            time.sleep(0.5)
    else:
        proc.kill()
        pytest.fail(f"the dashboard did not come up: {proc.stdout.read().decode()[-2000:]}")
    try:
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=20)


@contextmanager
def headless_chromium() -> Iterator[object]:
    """Debian's Chromium driven by Playwright (Playwright's own browser download is not reachable here)."""
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} missing: `apt-get install -y chromium` (make test installs it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=[
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run"])
        try:
            yield chromium
        finally:
            chromium.close()


def open_page(browser, url: str, heading: str):
    """A fresh tab on url, once the heading is shown and the page has stopped changing."""
    page = browser.new_page(viewport={"width": 1500, "height": 1800}, accept_downloads=True)
    page.goto(url)
    page.get_by_role("heading", name=heading, exact=True).first.wait_for(timeout=60_000)
    settle(page)
    return page


def settle(page) -> None:
    """Wait until Streamlit has drawn every lazy element (no skeleton left, element count steady)."""
    last, stable = -1, 0
    for _ in range(120):
        page.wait_for_timeout(500)
        count, skeletons = page.evaluate(
            "() => [document.querySelectorAll('[data-testid]').length,"
            " document.querySelectorAll('[data-testid=\"stSkeleton\"]').length]")
        stable = stable + 1 if (count == last and skeletons == 0) else 0
        if stable >= 3:
            return
        last = count
    raise AssertionError("the page kept changing for 60 s")


def assert_no_exception(page, name: str) -> None:
    """No exception box on the page, and no "Page not found" dialog (an unknown URL opens one)."""
    shown = page.locator('[data-testid="stException"]')
    assert shown.count() == 0, f"{name}: exception shown: {shown.first.inner_text()[:500]}"
    assert page.get_by_text("Page not found").count() == 0, f"{name}: the URL opened 'Page not found'"
