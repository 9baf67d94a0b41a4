"""The Evidence funnel page and the Replay funnel under Streamlit's AppTest, on the one-trajectory-per-rule fixture."""
from __future__ import annotations

from pathlib import Path

import pytest
from funnel_records import CHUNKS, DATASET, cases, correct_trajectory
from streamlit.testing.v1 import AppTest

from trajscope.warehouse import ingest_trajectories, load_chunks

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


@pytest.mark.parametrize(("script", "key", "default_count"), [("funnel", "funnel-runs", 2),
                                                              ("breakdowns", "breakdowns-runs", 4)])
def test_both_pages_share_one_run_picker(db, monkeypatch, script, key, default_count):
    # The URL's runs are chosen and an unknown one is named, never dropped silently.
    at = _open(db, script, monkeypatch, run=["funnel_noread", "nope"])
    assert at.multiselect(key=key).value == ["funnel_noread"]
    assert any("`run=nope` ignored: no such run in this warehouse" in w.value for w in at.warning)
    assert at.query_params["run"] in ("funnel_noread", ["funnel_noread"])  # the URL keeps only the known run
    # Without a URL: the first runs of the run list, the same list on both pages.
    at = _open(db, script, monkeypatch)
    picker = at.multiselect(key=key)
    # Each run by its readable name; both share dataset, controller and model, so each name ends with its id.
    assert picker.label == "Runs" and picker.options == [f"{DATASET} · react · m · funnel",
                                                         f"{DATASET} · react · m · funnel_noread"]
    assert picker.value == ["funnel", "funnel_noread"][:default_count]
    # Clearing the choice leaves a hint, not an empty page of errors.
    picker.set_value([]).run()
    assert not at.exception and any(i.value == "Choose at least one run." for i in at.info)
