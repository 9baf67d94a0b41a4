"""End to end: `trajscope app` on 127.0.0.1 driven by headless Chromium through every page."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "fixtures" / "app"))

from app_fixture_records import app_trajectories, upload_trajectories  # noqa: E402
from browser_support import PAGES, headless_chromium, serve_dashboard  # noqa: E402
from browser_support import assert_no_exception as _no_exception  # noqa: E402
from browser_support import open_page as _open  # noqa: E402
from browser_support import settle as _settle  # noqa: E402

SHOTS = ROOT / "artifacts" / "screenshots"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    from trajscope.warehouse import ingest_trajectories
    from trajscope.warehouse.audit import load_audit_files

    folder = tmp_path_factory.mktemp("e2e")
    db = folder / "wh.duckdb"
    ingest_trajectories(db, app_trajectories())
    load_audit_files(db, [ROOT / "tests" / "fixtures" / "audit" / "external_records.jsonl"])
    with serve_dashboard(db) as url:
        yield url, db, folder


@pytest.fixture(scope="module")
def browser():
    with headless_chromium() as chromium:
        yield chromium


def test_every_page_url_loads_directly_without_exceptions(server, browser):
    url, _, _ = server
    SHOTS.mkdir(parents=True, exist_ok=True)
    for path, heading in PAGES:
        page = _open(browser, f"{url}/{path}", heading)  # a fresh tab on the page's own URL
        _no_exception(page, path)
        page.screenshot(path=str(SHOTS / f"{path or 'overview'}.png"), full_page=True)
        page.close()


def test_overview_links_open_the_pages_they_name(server, browser):
    url, _, _ = server
    page = _open(browser, f"{url}/", "Overview")
    page.get_by_text("rejected 1 final(s) in 1 trajectories: open a replay").click()
    page.get_by_role("heading", name="Trajectory replay", exact=True).wait_for(timeout=60_000)
    _settle(page)
    _no_exception(page, "replay from the overview")
    assert "trajectory=run_gate%3A%3Aq2" in page.url and page.get_by_text("Rejected answer").count() == 1
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
    page = _open(browser, f"{url}/runs", "Runs")
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
    # the log's own uploader: the page also has uploaders for mapping, questions and patterns files
    page.locator('.st-key-upload-file input[type="file"]').set_input_files(str(log))
    page.get_by_text("Validation report").wait_for(timeout=60_000)
    _settle(page)
    _no_exception(page, "upload")
    assert page.get_by_text("2 valid trajectories").count() == 1
    page.get_by_role("button", name="Ingest into the warehouse").click()
    page.get_by_text("Ingested into").wait_for(timeout=60_000)
    page.screenshot(path=str(SHOTS / "upload_ingested.png"), full_page=True)
    page.close()
    runs = _open(browser, f"{url}/runs?run=run_upload", "Runs")
    assert runs.get_by_text("Trajectories of run_upload").count() == 1
    runs.close()
