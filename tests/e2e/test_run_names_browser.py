"""Runs by readable names in a real browser: the Evidence funnel and Breakdowns with 1 and 26 runs whose ids are
45-character hashes name each run dataset · controller/condition · model in their pickers, keep an id only where
two runs share a name, and draw every figure inside its column with its legend whole."""
from __future__ import annotations

import hashlib
import sys
import urllib.parse
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "fixtures" / "app"))

from browser_support import assert_no_exception, headless_chromium, open_page, serve_dashboard  # noqa: E402
from fixtures.forensics.builders import final, read, search, trajectory  # noqa: E402

SHOTS = ROOT / "artifacts" / "screenshots"
CONDITIONS = ("baseline", "gate-strict", "top_k-10-reranked", "no-read")
MODELS = ("gpt-4o-mini-2024-07-18", "qwen2.5-7b-instruct")
DATASETS = ("hotpotqa", "musique", "2wikimultihopqa")

pytestmark = pytest.mark.slow


def _hash_id(*parts: str) -> str:
    """A run id as engines write them: 45 characters that say nothing to a reader."""
    return "run-" + hashlib.sha256("/".join(parts).encode()).hexdigest()[:41]


def _runs():
    """24 distinct settings, plus two seeds of one setting (the same readable name, so each keeps its id)."""
    from trajscope.format import Run

    runs = [Run(run_id=_hash_id(d, c, m), dataset=d, controller="read_gate", condition=c, model=m)
            for d in DATASETS for c in CONDITIONS for m in MODELS]
    runs += [Run(run_id=_hash_id("seed", str(s)), dataset="hotpotqa", controller="vanilla_rag", condition="k5",
                 model="smollm2-135m", seed=s) for s in (1, 2)]
    return runs


def _expected_name(run) -> str:
    # Written out from the Run's own fields, independently of the dashboard's naming code.
    return f"{run.dataset} · {run.controller}/{run.condition} · {run.model}"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    from trajscope.warehouse import ingest_trajectories

    db = tmp_path_factory.mktemp("run_names_browser") / "wh.duckdb"
    records = []
    for run in _runs():
        for i in range(2):
            hop1, hop2 = (f"c{i}a", f"Person {i} founded Firm{i}."), (f"c{i}b", f"Firm{i} is based in City{i}.")
            records.append(trajectory(run, f"q{i}", f"Where is the firm Person {i} founded?", f"City{i}",
                                      [search(hop1, hop2), read(hop1), search(hop2), final(f"City{i}")],
                                      gold_chunks=(hop1[0], hop2[0])))
    ingest_trajectories(db, records)
    with serve_dashboard(db) as url, headless_chromium() as browser:
        yield url, browser


@pytest.mark.parametrize("n_runs", [1, 26])
@pytest.mark.parametrize(("path", "heading"), [("funnel", "Evidence funnel"), ("breakdowns", "Breakdowns")])
def test_run_names_are_readable_and_figures_fit_their_columns(served, path, heading, n_runs):
    url, browser = served
    runs = _runs()[-n_runs:]
    query = urllib.parse.urlencode([("run", r.run_id) for r in runs])
    page = open_page(browser, f"{url}/{path}?{query}", heading)
    assert_no_exception(page, f"{path} with {n_runs} runs")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{path}-{n_runs}-runs.png"), full_page=True)

    picker = page.locator('[data-testid="stMultiSelect"]').filter(has_text="Runs").first
    names = [_expected_name(r) for r in runs]
    everyone = [_expected_name(r) for r in _runs()]  # names are unique across the warehouse, not only the picked
    shared = {n for n in names if everyone.count(n) > 1}
    expected = [f"{n} · {r.run_id}" if n in shared else n for n, r in zip(names, runs, strict=True)]
    missing = [name for name in expected if picker.get_by_text(name, exact=True).count() != 1]
    assert not missing, f"the run picker does not show these names: {missing}"
    shown_ids = [r.run_id for n, r in zip(names, runs, strict=True) if n not in shared]
    body = page.inner_text("body")
    assert not [i for i in shown_ids if i in body], "a run with a unique name is still shown by its id"

    charts = page.locator('[data-testid="stVegaLiteChart"]')
    assert charts.count() >= 1
    overflow = charts.evaluate_all("""els => els.map(el => {
        const column = el.closest('[data-testid="stColumn"]');
        const drawn = el.querySelector('canvas, svg');
        if (!column || !drawn) return null;
        const c = column.getBoundingClientRect(), d = drawn.getBoundingClientRect();
        return [d.left - c.left, c.right - d.right, d.width, c.width, d.height];
    }).filter(x => x !== null)""")
    assert overflow, "no figure is drawn in the page's columns"
    for left, right, drawn, column, _ in overflow:
        assert left >= -1 and right >= -1, f"a figure {drawn:.0f} px wide runs out of its {column:.0f} px column"
    # Bars at least 220 px high and below them a legend line per run: a figure squeezed into its bars' height
    # squashes them or cuts its legend.
    tallest = max(height for *_, height in overflow)
    assert tallest > 220 + 10 * n_runs, f"the tallest figure is {tallest:.0f} px for {n_runs} runs"
    page.close()
