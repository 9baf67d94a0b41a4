"""Runs by a readable name (dataset · controller/condition · model) in pickers and legends, and an Evidence
funnel per-hop figure that fits its dashboard column at 1 to 50 runs and 1 to 6 hops."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import polars as pl
import pytest
import vl_convert as vlc
from fixtures.forensics.builders import final, read, search, trajectory
from streamlit.testing.v1 import AppTest

from trajscope.app.charts import funnel_chart, readable_run_names
from trajscope.app.charts._figures import FUNNEL_COLUMN_PX
from trajscope.format import GateRejectionStep, Run
from trajscope.warehouse import ingest_trajectories

ROOT = Path(__file__).resolve().parents[1]
STAGES = ("queried", "retrieved", "snippet_shown", "read", "used")
RUNS = pl.DataFrame({
    "run_id": ["hotpotqa-read_gate-baseline-9c2f1e0a7b", "hotpotqa-read_gate-gate-da21c4", "seed-1", "seed-2",
               "imported-3f9a"],
    "dataset": ["hotpotqa", "hotpotqa", "musique", "musique", None],
    "controller": ["read_gate", "read_gate", "vanilla_rag", "vanilla_rag", None],
    "condition": ["baseline", "gate", "k5", "k5", None],
    "model": ["gpt-4o-mini", "gpt-4o-mini", "smollm2", "smollm2", None],
})


def test_a_run_is_named_by_dataset_setting_and_model_and_by_its_id_only_where_that_is_ambiguous():
    names = readable_run_names(RUNS, RUNS["run_id"].to_list())
    assert names == {
        "hotpotqa-read_gate-baseline-9c2f1e0a7b": "hotpotqa · read_gate/baseline · gpt-4o-mini",
        "hotpotqa-read_gate-gate-da21c4": "hotpotqa · read_gate/gate · gpt-4o-mini",
        # Two seeds of one setting: the same name, so each keeps its id after it.
        "seed-1": "musique · vanilla_rag/k5 · smollm2 · seed-1",
        "seed-2": "musique · vanilla_rag/k5 · smollm2 · seed-2",
        "imported-3f9a": "imported-3f9a",  # nothing to name it by
    }
    # Alone, a seed needs no id.
    assert readable_run_names(RUNS, ["seed-1"]) == {"seed-1": "musique · vanilla_rag/k5 · smollm2"}


def _svg_width(chart) -> float:
    svg = vlc.vegalite_to_svg(chart.to_json())
    return float(re.search(r'<svg[^>]*width="([\d.]+)"', svg).group(1))


@pytest.mark.parametrize(("hops", "runs"), [(1, 1), (2, 10), (4, 50), (6, 3)])
def test_the_per_hop_funnel_fits_its_column(hops, runs):
    long = "hotpotqa · read_gate/a-rather-long-condition-name-{} · gpt-4o-mini-2024-07-18"
    df = pl.DataFrame([{"run": long.format(r), "run_id": f"r{r}", "hop": h, "n_passages": 4,
                        **dict.fromkeys(STAGES, 0.5)} for r in range(runs) for h in range(1, hops + 1)])
    per_hop = funnel_chart(df, stages=STAGES, group="run", facet="hop", title="Funnel per hop")
    per_run = funnel_chart(df.filter(pl.col("hop") == 1), stages=STAGES, group="run", title="Funnel per run")
    assert _svg_width(per_hop) <= FUNNEL_COLUMN_PX and _svg_width(per_run) <= FUNNEL_COLUMN_PX


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("run_names") / "wh.duckdb"
    records = []
    for run_id, condition, model in (("hp-rg-base-7f3e9a", "baseline", "gpt-4o-mini"),
                                     ("hp-rg-gate-0c4d21", "gate", "gpt-4o-mini")):
        run = Run(run_id=run_id, dataset="hotpotqa", controller="read_gate", condition=condition, model=model)
        for i in range(3):
            gold = (f"c{i}", f"Person {i} was born in City{i}.")
            records.append(trajectory(run, f"q{i}", f"Where was Person {i} born?", f"City{i}",
                                      [search(gold), read(gold), final(f"City{i}")], gold_chunks=(gold[0],)))
    ingest_trajectories(path, records)
    return path


@pytest.mark.parametrize(("page", "widget"), [("funnel", "multiselect"), ("breakdowns", "multiselect"),
                                              ("search", "multiselect"), ("compare", "selectbox"),
                                              ("replay", "selectbox")])
def test_the_pickers_show_readable_names_with_the_ids_in_their_help(warehouse, monkeypatch, page, widget):
    monkeypatch.setenv("TRAJSCOPE_DB", str(warehouse))
    at = AppTest.from_file(str(ROOT / "app" / "page_scripts" / f"{page}.py"), default_timeout=60).run()
    assert not at.exception, [e.message for e in at.exception]
    picker = next(w for w in getattr(at, widget) if w.label.startswith("Run"))
    assert sorted(picker.options) == ["hotpotqa · read_gate/baseline · gpt-4o-mini",
                                      "hotpotqa · read_gate/gate · gpt-4o-mini"]
    assert "`hp-rg-base-7f3e9a`" in picker.help and "`hp-rg-gate-0c4d21`" in picker.help


def test_the_overviews_findings_name_runs_readably(tmp_path, monkeypatch):
    sys.path.insert(0, str(ROOT / "tests" / "fixtures" / "app"))
    from app_fixture_records import app_trajectories

    records = app_trajectories()
    ingest_trajectories(tmp_path / "wh.duckdb", records)
    gated = next(t.run for t in records if any(isinstance(s, GateRejectionStep) for s in t.steps))
    expected = " · ".join(p for p in (gated.dataset, f"{gated.controller}/{gated.condition}", gated.model) if p)
    monkeypatch.setenv("TRAJSCOPE_DB", str(tmp_path / "wh.duckdb"))
    at = AppTest.from_file(str(ROOT / "app" / "main.py"), default_timeout=60).run()
    assert not at.exception, [e.message for e in at.exception]
    labels = [n.proto.label for n in at.get("page_link") if n.proto.page.endswith("replay")]
    assert any(label.startswith(f"The gates of {expected} rejected ") for label in labels)
    assert not any("`" in label for label in labels)  # no run shown by its bare id
