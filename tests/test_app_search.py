"""The Search page under Streamlit's AppTest: the scan command it writes, stored verdicts with cited steps,
a label saved through the warehouse, the rubric's prevalence between two runs, and the clusters."""
from __future__ import annotations

from pathlib import Path

import pytest
from fixtures.forensics.builders import final, read, search, trajectory
from streamlit.testing.v1 import AppTest

from engine.llm import resolve_model
from engine.mock_llm import MockLLMServer, reply_json
from engine.scanners import scan
from trajscope.format import Run
from warehouse import ingest_trajectories, open_readonly
from warehouse.verdicts import ClusterRow, MemberRow, store_clustering

ROOT = Path(__file__).resolve().parents[1]
RUBRIC = "The agent read a gold passage and still answered wrong."


def _records(run_id: str, wrong: set[int]) -> list:
    run = Run(run_id=run_id, dataset="fx", condition=run_id)
    return [trajectory(run, f"q{i}", f"Where was P{i} born?", f"C{i}",
                       [search((f"g{i}", "bio")), read((f"g{i}", f"P{i} was born in C{i}.")),
                        final(f"T{i}" if i in wrong else f"C{i}")], gold_chunks=(f"g{i}",)) for i in range(6)]


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("search") / "wh.duckdb"
    records = _records("base", {0, 1, 2}) + _records("gate", {0})
    ingest_trajectories(path, records)

    def respond(request):
        wrong = "Final answer: T" in request.text()
        return reply_json({"verdict": "match" if wrong else "no_match", "explanation": "read C, said T" if wrong
                           else "answered from the passage", "cited_steps": ["1", "2"] if wrong else []})

    with MockLLMServer(respond) as server:
        scan(path, RUBRIC, ["base", "gate"], config=resolve_model(server.model_spec))
    ids = [(r.trajectory_id, r.question.question_id) for r in records if r.run.run_id == "base"]
    with open_readonly(path) as con:
        hashes = dict(con.execute("SELECT trajectory_id, record_hash FROM trajectories").fetchall())
    store_clustering(path, clustering_id="c1", method="embedding", model="all-MiniLM-L6-v2", slice_sql=None, k=2,
                     clusters=[ClusterRow(0, "read then wrong"), ClusterRow(1, "fine")],
                     members=[MemberRow(t, hashes[t], 0 if q in ("q0", "q1", "q2") else 1) for t, q in ids])
    return path


def test_search_page_writes_the_command_browses_labels_and_compares(db, monkeypatch):
    monkeypatch.setenv("TRAJSCOPE_DB", str(db))
    at = AppTest.from_file(str(ROOT / "app" / "page_scripts" / "search.py"), default_timeout=60)
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    assert at.title[0].value == "Search"
    at.text_area(key="search-rubric").input("ignored the gold passage").run()
    codes = [c.value for c in at.code]
    assert any(c.startswith("trajscope scan 'ignored the gold passage' --runs base --model local --db ") for c in codes)
    assert any("WHERE run_id IN ('base')" in c for c in codes)
    table = at.dataframe[0].value
    assert sorted(table["question_id"]) == ["q0", "q1", "q2"] and set(table["verdict"]) == {"match"}
    assert any("cited" in m.value and "[1] read" in m.value for m in at.markdown)
    at.radio(key="search-label-value").set_value("disagree")
    at.button[0].click().run()
    assert not at.exception, [e.message for e in at.exception]
    with open_readonly(db) as con:
        labels = con.execute("SELECT label FROM rubric_verdicts WHERE label IS NOT NULL").fetchall()
    assert labels == [("disagree",)]
    prevalence = next(d.value for d in at.dataframe if "acc_a" in d.value.columns)
    assert prevalence["acc_a"][0] == pytest.approx(3 / 6) and prevalence["acc_b"][0] == pytest.approx(1 / 6)
    sizes = next(d.value for d in at.dataframe if "trajectories" in d.value.columns)
    assert dict(zip(sizes["name"], sizes["trajectories"], strict=True)) == {"read then wrong": 3, "fine": 3}
