"""End to end: `trajscope app` on 127.0.0.1 driven by headless Chromium through every page."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "fixtures" / "app"))

from app_fixture_records import app_trajectories, upload_trajectories  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
SHOTS = ROOT / "artifacts" / "screenshots"
PAGES = [  # url path (the default page, Runs, lives at /), a heading the page must show
    ("", "Runs"), ("failure_plane", "Failure plane"), ("breakdowns", "Breakdowns"),
    ("replay", "Trajectory replay"), ("compare", "Compare"), ("audit", "Intervention audit"),
    ("upload", "Upload"), ("sql", "SQL console"), ("export", "Export"),
]

pytestmark = pytest.mark.slow


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} missing: `apt-get install -y chromium` (make test installs it)")
    from warehouse import ingest_trajectories
    from warehouse.audit import load_audit_files

    folder = tmp_path_factory.mktemp("e2e")
    db = folder / "wh.duckdb"
    ingest_trajectories(db, app_trajectories())
    load_audit_files(db, [ROOT / "tests" / "fixtures" / "audit" / "external_records.jsonl"])
    port = _free_port()
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
    yield url, db, folder
    proc.terminate()
    proc.wait(timeout=20)


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=[
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run"])
        yield chromium
        chromium.close()


def _open(browser, url: str, heading: str):
    page = browser.new_page(viewport={"width": 1500, "height": 1800}, accept_downloads=True)
    page.goto(url)
    page.get_by_role("heading", name=heading, exact=True).first.wait_for(timeout=60_000)
    _settle(page)
    return page


def _settle(page) -> None:
    # Streamlit streams elements and draws lazy ones (charts, buttons) as skeletons first: wait
    # until no skeleton is left and the element count has stopped changing.
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


def _no_exception(page, name: str) -> None:
    shown = page.locator('[data-testid="stException"]')
    assert shown.count() == 0, f"{name}: exception shown: {shown.first.inner_text()[:500]}"


def test_every_page_renders_without_exceptions(server, browser):
    url, _, _ = server
    SHOTS.mkdir(parents=True, exist_ok=True)
    for path, heading in PAGES:
        page = _open(browser, f"{url}/{path}", heading)
        _no_exception(page, path)
        page.screenshot(path=str(SHOTS / f"{path or 'runs'}.png"), full_page=True)
        page.close()


def test_replay_opens_from_a_deep_link(server, browser):
    url, _, _ = server
    page = _open(browser, f"{url}/replay?trajectory=run_gate%3A%3Aq2", "Trajectory replay")
    _no_exception(page, "replay deep link")
    assert page.get_by_text("Who founded Bo's mill?").count() >= 1
    assert page.get_by_text("Rejected answer").count() == 1
    page.screenshot(path=str(SHOTS / "replay_deep_link.png"), full_page=True)
    page.close()


def test_runs_table_downloads_as_csv(server, browser):
    url, _, folder = server
    page = _open(browser, f"{url}/", "Runs")
    with page.expect_download() as download:
        page.get_by_role("button", name="CSV", exact=True).first.click()
    target = folder / "runs.csv"
    download.value.save_as(target)
    lines = target.read_text().splitlines()
    assert lines[0].startswith("run_id,dataset,controller")
    assert sorted(line.split(",")[0] for line in lines[1:]) == ["run_base", "run_gate", "run_other"]
    page.close()


def test_upload_validates_previews_and_ingests(server, browser):
    url, db, folder = server
    from trajscope.format import write_jsonl

    log = folder / "uploaded.jsonl"
    with open(log, "wb") as out:
        write_jsonl(upload_trajectories(), out)
    page = _open(browser, f"{url}/upload", "Upload")
    page.locator('input[type="file"]').set_input_files(str(log))
    page.get_by_text("Validation report").wait_for(timeout=60_000)
    _settle(page)
    _no_exception(page, "upload")
    assert page.get_by_text("2 valid trajectories").count() == 1
    page.get_by_role("button", name="Ingest into the warehouse").click()
    page.get_by_text("Ingested into").wait_for(timeout=60_000)
    page.screenshot(path=str(SHOTS / "upload_ingested.png"), full_page=True)
    page.close()
    runs = _open(browser, f"{url}/?run=run_upload", "Runs")
    assert runs.get_by_text("Trajectories of run_upload").count() == 1
    runs.close()
