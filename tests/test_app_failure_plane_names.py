"""The failure plane lists the runs it cannot draw by their readable names, each id in the line's help."""
from __future__ import annotations

from pathlib import Path

import pytest
from fixtures.forensics.builders import final, read, search, trajectory
from streamlit.testing.v1 import AppTest

from trajscope.format import Run
from trajscope.warehouse import ingest_trajectories

ROOT = Path(__file__).resolve().parents[1]
RUNS = [Run(run_id="run-5be0c2f7a9d14e3b8c6f0a2d9e7b1c4f5a8d3e6b9c0", dataset="hotpotqa", controller="read_gate",
            condition="gate", model="gpt-4o-mini"),
        Run(run_id="run-0f3a9c8e7d6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0", dataset="hotpotqa", controller="read_gate",
            condition="baseline", model="gpt-4o-mini")]


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # No verdicts: neither axis applies to any run, so every run is listed as not drawn.
    path = tmp_path_factory.mktemp("plane_names") / "wh.duckdb"
    records = []
    for run in RUNS:
        for i in range(2):
            gold = (f"c{i}", f"Person {i} was born in City{i}.")
            records.append(trajectory(run, f"q{i}", f"Where was Person {i} born?", f"City{i}",
                                      [search(gold), read(gold), final("Nowhere")], gold_chunks=(gold[0],)))
    ingest_trajectories(path, records)
    return path


def test_runs_not_drawn_are_named_readably_with_their_ids_in_help(warehouse, monkeypatch):
    monkeypatch.setenv("TRAJSCOPE_DB", str(warehouse))
    at = AppTest.from_file(str(ROOT / "app" / "page_scripts" / "failure_plane.py"), default_timeout=60).run()
    assert not at.exception, [e.message for e in at.exception]
    listed = [c for c in at.caption if " — " in c.value]
    expected = {f"{r.dataset} · {r.controller}/{r.condition} · {r.model}": r.run_id for r in RUNS}
    assert sorted(c.value.split(" — ")[0] for c in listed) == sorted(expected)
    for caption in listed:
        name = caption.value.split(" — ")[0]
        assert expected[name] in caption.proto.help and expected[name] not in caption.value
