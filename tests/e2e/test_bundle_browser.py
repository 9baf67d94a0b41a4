"""A finding bundle opened from disk in headless Chromium with the network off: every table, figure and replay
its manifest names is shown, each step anchor scrolls to its step, and nothing but the file is requested."""
from __future__ import annotations

import hashlib
import sys
from importlib.metadata import version
from pathlib import Path

import pytest
from click.testing import CliRunner

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "fixtures" / "app"))

from app_fixture_records import app_trajectories  # noqa: E402
from browser_support import headless_chromium  # noqa: E402

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    from trajscope.cli import main as cli
    from trajscope.warehouse import ingest_trajectories

    folder = tmp_path_factory.mktemp("bundle")
    db = folder / "wh.duckdb"
    ingest_trajectories(db, app_trajectories())
    out = folder / "finding.html"
    result = CliRunner().invoke(cli, [
        "bundle", "--db", str(db), "--runs", "run_base", "run_gate", "--out", str(out),
        "--query", "SELECT run_id, question_id, label FROM failure_rg WHERE extractor = 'regex'"])
    assert result.exit_code == 0, result.output
    return db, out


def test_the_bundle_shows_everything_it_names_offline(bundle):
    db, out = bundle
    steps = {t.trajectory_id: len(t.steps) for t in app_trajectories()}
    with headless_chromium() as chromium:
        context = chromium.new_context(offline=True, viewport={"width": 1400, "height": 1000})
        requested: list[str] = []
        context.on("request", lambda r: requested.append(r.url))
        context.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file://")
                      else route.abort())
        page = context.new_page()
        page.goto(out.as_uri())
        m = page.evaluate("() => JSON.parse(document.getElementById('bundle-manifest').textContent)")
        assert page.locator("#warehouse-sha256").inner_text() == hashlib.sha256(db.read_bytes()).hexdigest()
        assert page.locator("#trajscope-version").inner_text() == version("trajscope")
        assert len(m["tables"]) == 4 and len(m["figures"]) >= 2
        for table in m["tables"]:
            section = page.locator(f"#{table['id']}")
            assert section.is_visible(), table
            assert page.locator(f"#{table['id']} pre.sql").inner_text().strip() == table["sql"].strip()
            assert page.locator(f"#{table['id']}-data tbody tr").count() == table["rows"] > 0
        for figure in m["figures"]:
            box = page.locator(f"#{figure['id']} svg").first.bounding_box()
            assert box is not None and box["width"] > 100 and box["height"] > 100, figure
            # Vega draws marks as paths: an empty chart would have axes only
            assert page.locator(f"#{figure['id']} svg path").count() > 5, figure
        # every trajectory of both runs, and run_other's two the query names (p1, p2)
        assert {r["trajectory_id"] for r in m["replays"]} == {
            t for t in steps if not t.startswith("run_other")} | {"run_other::p1", "run_other::p2"}
        for replay in m["replays"]:
            assert page.locator(f"#{replay['id']}").is_visible()
            assert len(replay["steps"]) == steps[replay["trajectory_id"]]
            for anchor in replay["steps"]:
                page.goto(f"{out.as_uri()}#{anchor}")
                step = page.locator(f"#{anchor}")
                assert step.is_visible() and step.evaluate("e => e.matches(':target')"), anchor
                top = step.bounding_box()["y"]
                assert -2 <= top < 1000, (anchor, top)  # scrolled into view (sub-pixel rounding above 0)
        # a replay link in the Trajectories table leads to its replay
        page.goto(out.as_uri())
        link = page.locator("#table-4-data a").first
        target = link.get_attribute("href")
        link.click()
        assert page.locator(target).evaluate("e => e.matches(':target')")
        context.close()
    assert requested and all(u.startswith("file://") for u in requested), [u for u in requested
                                                                           if not u.startswith("file://")]
