"""End to end: the Search page in headless Chromium runs a rubric scan against the loopback mock model, shows
its progress while other pages stay usable, takes a label, and opens a replay with the cited steps marked."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

from browser_support import assert_no_exception, headless_chromium, open_page, serve_dashboard, settle  # noqa: E402
from fixtures.forensics.builders import final, read, search, trajectory  # noqa: E402

from trajscope.engine.mock_llm import MockLLMServer, reply_json  # noqa: E402
from trajscope.format import Run  # noqa: E402
from trajscope.warehouse import ingest_trajectories, open_readonly  # noqa: E402

pytestmark = pytest.mark.slow

RUBRIC = "The agent read a gold passage and still answered wrong."
SHOTS = ROOT / "artifacts" / "screenshots"
LATENCY_S = 4.0  # per reply: 12 trajectories at 8 in flight take two rounds, time to open another page meanwhile


def _records(run_id: str, wrong: set[int]) -> list:
    run = Run(run_id=run_id, dataset="fx", condition=run_id)
    return [trajectory(run, f"q{i}", f"Where was P{i} born?", f"C{i}",
                       [search((f"g{i}", "bio")), read((f"g{i}", f"P{i} was born in C{i}.")),
                        final(f"T{i}" if i in wrong else f"C{i}")], gold_chunks=(f"g{i}",)) for i in range(6)]


def _respond(request):
    wrong = "Final answer: T" in request.text()
    return reply_json({"verdict": "match" if wrong else "no_match",
                       "explanation": "read the gold passage, answered T" if wrong else "answered from the passage",
                       "cited_steps": ["1", "2"] if wrong else []})


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    folder = tmp_path_factory.mktemp("search-e2e")
    db = folder / "wh.duckdb"
    ingest_trajectories(db, _records("base", {0, 1, 2}) + _records("gate", {0}))
    saved = os.environ.get("TRAJSCOPE_CACHE")
    os.environ["TRAJSCOPE_CACHE"] = str(folder / "cache")  # the scan's child process: no reply from another test
    try:
        with MockLLMServer(_respond, latency_s=LATENCY_S) as mock, serve_dashboard(db) as url:
            yield url, db, mock
    finally:
        if saved is None:
            os.environ.pop("TRAJSCOPE_CACHE", None)
        else:
            os.environ["TRAJSCOPE_CACHE"] = saved


@pytest.fixture(scope="module")
def browser():
    with headless_chromium() as chromium:
        yield chromium


def _job_stage(db: Path) -> str:
    import json

    files = list(db.parent.glob(f"{db.name}.scan-*.json"))
    assert len(files) == 1, files
    return json.loads(files[0].read_text())["stage"]


def test_search_runs_a_scan_labels_a_verdict_and_opens_the_cited_steps(served, browser):
    url, db, mock = served
    SHOTS.mkdir(parents=True, exist_ok=True)
    page = open_page(browser, f"{url}/search", "Search")
    assert_no_exception(page, "search")
    assert page.get_by_text("No rubric verdicts yet").count() == 1

    page.locator(".st-key-search-rubric textarea").fill(RUBRIC)
    page.keyboard.press("Control+Enter")
    settle(page)
    runs = page.locator(".st-key-search-runs input")
    runs.click()
    runs.fill("gate")
    page.keyboard.press("Enter")
    settle(page)
    model = page.locator(".st-key-search-model input")
    model.fill(mock.model_spec)
    model.press("Enter")
    settle(page)
    command = page.locator('[data-testid="stCode"]').first.inner_text()
    assert command.startswith("trajscope scan 'The agent read a gold passage and still answered wrong.' "
                              "--runs base --runs gate --model mock:") and f"--db {db}" in command

    page.get_by_role("button", name="Run the scan").click()
    page.get_by_text("you may use other pages meanwhile").first.wait_for(timeout=60_000)
    # While the scan runs in its own process, another page of the same server opens and answers.
    other = open_page(browser, f"{url}/runs", "Runs")
    assert_no_exception(other, "runs during a scan")
    assert _job_stage(db) in ("starting", "slice", "model"), "the scan ended before the other page opened"
    other.close()

    page.get_by_text("Scan finished").wait_for(timeout=120_000)
    settle(page)
    assert_no_exception(page, "search after the scan")
    assert page.get_by_text("trajectories: match 4, no_match 8, unsure 0, error 0").count() == 1
    # gate's q0 and q3-q5 render exactly as base's (same question, passages and answer): 8 distinct prompts, each
    # asked once unless its twin was still in flight (then the cache had no answer yet)
    asked = [r.text() for r in mock.chat_requests]
    assert len(set(asked)) == 8 and 8 <= len(asked) <= 12
    with open_readonly(db) as con:
        stored = con.execute("SELECT run_id, count(*) FILTER (verdict = 'match') FROM rubric_verdicts "
                             "GROUP BY run_id ORDER BY run_id").fetchall()
    assert stored == [("base", 3), ("gate", 1)]
    # The first verdict shown (hits first: base q0) with its explanation and its two cited steps.
    assert page.get_by_text("read the gold passage, answered T").count() >= 1
    assert page.get_by_text("cited [1] read").count() == 1 and page.get_by_text("cited [2] final").count() == 1
    page.screenshot(path=str(SHOTS / "search_after_scan.png"), full_page=True)

    page.locator(".st-key-search-label-value").get_by_text("disagree").click()
    page.get_by_role("button", name="Save label").click()
    page.get_by_text("Labelled disagree.").wait_for(timeout=60_000)
    with open_readonly(db) as con:
        labelled = con.execute("SELECT question_id, label FROM rubric_verdicts WHERE label IS NOT NULL").fetchall()
    assert labelled == [("q0", "disagree")]

    link = page.get_by_role("link", name="Open the replay with the cited steps marked")
    href = link.get_attribute("href")
    assert "trajectory=base%3A%3Aq0" in href and "&verdict=" in href
    page.close()
    replay = open_page(browser, f"{url}/{href.removeprefix('./')}", "Trajectory replay")
    replay.get_by_text("Judge verdicts").wait_for(timeout=60_000)  # the last part of a replay: every step drawn
    settle(replay)
    assert_no_exception(replay, "replay of a verdict")
    replay.screenshot(path=str(SHOTS / "replay_cited_steps.png"), full_page=True)
    for step, marked in ((0, False), (1, True), (2, True)):
        assert replay.locator(f".st-key-replay-cited-{step}").count() == int(marked), step
    for step, kind in ((1, "read"), (2, "final")):
        text = replay.locator(f".st-key-replay-cited-{step}").inner_text()
        assert f"{step}. {kind}" in text and "Cited step: cited by the model (mock)" in text, text
    replay.close()


def test_a_scan_the_page_started_reports_a_failure_with_its_reason(served, browser):
    url, db, mock = served
    before = len(mock.chat_requests)
    page = open_page(browser, f"{url}/search", "Search")
    page.locator(".st-key-search-rubric textarea").fill("any rubric")
    page.keyboard.press("Control+Enter")
    settle(page)
    for key, value in (("search-where", "no_such_column = 1"), ("search-model", mock.model_spec)):
        box = page.locator(f".st-key-{key} input")
        box.fill(value)
        box.press("Enter")
        settle(page)
    page.get_by_role("button", name="Run the scan").click()
    page.get_by_text("Scan failed").wait_for(timeout=120_000)
    assert page.get_by_text("no_such_column").count() >= 1
    assert len(mock.chat_requests) == before, "a scan whose slice failed asked the model"
    page.close()
