"""The Evidence funnel page and the Replay funnel under Streamlit's AppTest, on the one-trajectory-per-rule fixture."""
from __future__ import annotations

from pathlib import Path

import pytest
from funnel_records import CHUNKS, DATASET, cases, correct_trajectory
from streamlit.testing.v1 import AppTest

from warehouse import ingest_trajectories, load_chunks

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("funnel-app") / "w.duckdb"
    ingest_trajectories(path, [t for t, *_ in cases().values()] + [correct_trajectory()])
    load_chunks(path, CHUNKS, DATASET)
    return path


def _open(db: Path, script: str, monkeypatch, **query) -> AppTest:
    monkeypatch.setenv("TRAJSCOPE_DB", str(db))
    at = AppTest.from_file(str(ROOT / "app" / "page_scripts" / f"{script}.py"), default_timeout=60)
    at.query_params.update(query)
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def test_funnel_page_draws_runs_hops_pairs_and_decisive_errors(db, monkeypatch):
    at = _open(db, "funnel", monkeypatch, run=["funnel", "funnel_noread"])
    by_hop = [d.value for d in at.dataframe if {"hop", "read", "n_passages"} <= set(d.value.columns)][0]
    funnel = by_hop[by_hop["run_id"] == "funnel"].set_index("hop")
    # Hop 1 read in 8 of the run's 10 trajectories with gold, hop 2 in 5 (worked out in test_evidence_funnel).
    assert funnel.loc[1, "read"] == pytest.approx(0.8) and funnel.loc[2, "read"] == pytest.approx(0.5)
    rules = [d.value for d in at.dataframe if {"rule", "erag_label", "n"} <= set(d.value.columns)][0]
    mine = rules[rules["run_id"] == "funnel"]
    assert dict(zip(mine["rule"], mine["n"], strict=True))["not_read"] == 1
    assert "does not apply: no read_action" in set(rules["rule"])
    # Both runs share only q-lothair: the paired table has its stages (one question each).
    paired = [d.value for d in at.dataframe if "mcnemar_exact_p" in d.value.columns][0]
    assert set(paired["stage"]) <= {"queried", "retrieved", "snippet_shown", "read", "used"}
    assert len(at.get("vega_lite_chart")) >= 4


def test_replay_shows_the_funnel_with_step_links_and_the_decisive_error(db, monkeypatch):
    at = _open(db, "replay", monkeypatch, trajectory="funnel::not_read")
    text = "\n".join(m.value for m in at.markdown)
    assert "| 2 | Ermengarde of Tours | [2](#step-2) | [2](#step-2) (rank 1) | [2](#step-2) | — | — |" in text
    assert "**First decisive error (trajscope):** `not_read` at step [2](#step-2), hop 2" in text
    assert '<span id="step-2"></span>' in text
