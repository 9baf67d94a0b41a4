"""The Search page under Streamlit's AppTest: the scan command it writes, stored verdicts with cited steps,
a label saved through the warehouse, the rubric's prevalence between two runs, and the clusters."""
from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from fixtures.forensics.builders import final, read, search, trajectory
from streamlit.testing.v1 import AppTest

from trajscope.app.jobs import ScanJob, read_scan_job, scan_job_path, scan_running, write_scan_job
from trajscope.engine.llm import resolve_model
from trajscope.engine.mock_llm import MockLLMServer, reply_json
from trajscope.engine.scanners import scan
from trajscope.format import Run
from trajscope.warehouse import ingest_trajectories, open_readonly
from trajscope.warehouse.verdicts import ClusterRow, MemberRow, VerdictRow, store_clustering, store_verdicts

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
    # An attribution of base::q0 naming its search (step 0) as the decisive error.
    store_verdicts(path, [VerdictRow(scanner="attribution", trajectory_id="base::q0", record_hash=hashes["base::q0"],
                                     model="mock", prompt_version="attribution-v2", protocol="binary-search",
                                     verdict="attributed", explanation="searched badly", step_index=0,
                                     cited_steps=[0])])
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
    assert all(link.endswith(f"&verdict={v}") for link, v in zip(table["replay"], table["verdict_id"], strict=True))
    assert any("cited" in m.value and "[1] read" in m.value for m in at.markdown)
    at.radio(key="search-label-value").set_value("disagree")
    next(b for b in at.button if b.label == "Save label").click().run()
    assert not at.exception, [e.message for e in at.exception]
    with open_readonly(db) as con:
        labels = con.execute("SELECT label FROM rubric_verdicts WHERE label IS NOT NULL").fetchall()
    assert labels == [("disagree",)]
    # One labelled verdict: the model said match, the person disagreed: precision 0 of 1, no true match to recall.
    agreement = next(d.value for d in at.dataframe if "precision" in d.value.columns)
    mock = agreement[agreement["scanner"] == "mock"].iloc[0]
    assert mock["n"] == 1 and mock["precision"].startswith("0.000 [") and mock["recall"].startswith("does not apply")
    prevalence = next(d.value for d in at.dataframe if "acc_a" in d.value.columns)
    assert prevalence["acc_a"][0] == pytest.approx(3 / 6) and prevalence["acc_b"][0] == pytest.approx(1 / 6)
    sizes = next(d.value for d in at.dataframe if "trajectories" in d.value.columns)
    assert dict(zip(sizes["name"], sizes["trajectories"], strict=True)) == {"read then wrong": 3, "fine": 3}


def _marked_steps(at: AppTest) -> dict[int, str]:
    """{step index: its mark} read off the replay in page order: a mark belongs to the step title before it."""
    marks, step = {}, None
    for m in at.markdown:
        title = re.search(r"\*\*(\d+)\. \w+\*\*", m.value)
        if title:
            step = int(title.group(1))
        elif "**Cited step**" in m.value:
            marks[step] = m.value
    return marks


def _verdict_of(db: Path, scanner: str, question_id: str) -> str:
    with open_readonly(db) as con:
        return con.execute("SELECT v.verdict_id FROM scan_verdicts v JOIN trajectories t USING (trajectory_id) "
                           "WHERE t.run_id = 'base' AND t.question_id = ? AND v.scanner = ?",
                           [question_id, scanner]).fetchone()[0]


def test_replay_marks_the_steps_a_rubric_verdict_cites_from_its_link(db, monkeypatch):
    monkeypatch.setenv("TRAJSCOPE_DB", str(db))
    at = AppTest.from_file(str(ROOT / "app" / "page_scripts" / "replay.py"), default_timeout=60)
    verdict = _verdict_of(db, "rubric", "q1")
    at.query_params.update({"trajectory": "base::q1", "verdict": verdict})
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    marks = _marked_steps(at)
    assert sorted(marks) == [1, 2] and all("cited by the model (mock" in m for m in marks.values())
    assert any(m.value.startswith("**match**") and "Cited steps: [1](#step-1), [2](#step-2)" in m.value
               for m in at.markdown)
    at.selectbox(key="replay-verdict").select_index(0).run()  # unpicked: nothing marked, the URL forgets it
    assert _marked_steps(at) == {} and "verdict" not in at.query_params


def test_replay_marks_an_attributions_decisive_step_and_ignores_a_foreign_verdict(db, monkeypatch):
    monkeypatch.setenv("TRAJSCOPE_DB", str(db))
    at = AppTest.from_file(str(ROOT / "app" / "page_scripts" / "replay.py"), default_timeout=60)
    at.query_params.update({"trajectory": "base::q0", "verdict": _verdict_of(db, "rubric", "q2")})  # q2's verdict
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    assert _marked_steps(at) == {}
    assert any("is not a verdict on this version of the trajectory" in c.value for c in at.caption)
    options = at.selectbox(key="replay-verdict").options
    assert len(options) == 3  # none, q0's rubric verdict, q0's attribution
    at.selectbox(key="replay-verdict").set_value(_verdict_of(db, "attribution", "q0")).run()
    marks = _marked_steps(at)
    assert list(marks) == [0] and "the decisive error named by the model (mock)" in marks[0]


def test_run_the_scan_starts_it_in_its_own_process_and_shows_its_verdicts(tmp_path, monkeypatch):
    db = tmp_path / "wh.duckdb"
    ingest_trajectories(db, _records("solo", {3}))
    monkeypatch.setenv("TRAJSCOPE_DB", str(db))
    monkeypatch.setenv("TRAJSCOPE_CACHE", str(tmp_path / "cache"))  # the child's cache: no reply of another test

    def respond(request):
        wrong = "Final answer: T3" in request.text()
        return reply_json({"verdict": "match" if wrong else "no_match", "explanation": "said T3" if wrong else "fine",
                           "cited_steps": ["2", "99"] if wrong else []})

    with MockLLMServer(respond) as server:
        at = AppTest.from_file(str(ROOT / "app" / "page_scripts" / "search.py"), default_timeout=60).run()
        at.text_area(key="search-rubric").input(RUBRIC).run()
        at.text_input(key="search-model").input(server.model_spec).run()
        at.button(key="search-run").click().run()
        assert not at.exception, [e.message for e in at.exception]
        job = read_scan_job(Path(at.session_state["search-job"]))
        assert job is not None and job.stage in ("starting", "slice", "model", "store", "done")
        for _ in range(240):  # the child's progress file, polled as the page's fragment polls it
            job = read_scan_job(Path(at.session_state["search-job"]))
            if job.stage in ("done", "failed"):
                break
            time.sleep(0.5)
        assert job.stage == "done", job
        assert job.done == job.total == 6 and "match 1, no_match 5" in job.message
        assert "1 citations outside their trajectory rejected" in job.message
        at.run()
    assert not at.exception, [e.message for e in at.exception]
    assert len(server.chat_requests) == 6
    assert any("Scan finished" in s.value for s in at.success)
    table = at.dataframe[0].value
    assert list(table["question_id"]) == ["q3"] and list(table["cited_steps"][0]) == [2]


def test_a_failed_scan_shows_why_and_a_killed_one_is_not_running(tmp_path, monkeypatch):
    db = tmp_path / "wh.duckdb"
    ingest_trajectories(db, _records("solo", set()))
    monkeypatch.setenv("TRAJSCOPE_DB", str(db))
    failed = scan_job_path(db, "abc123")
    write_scan_job(failed, ScanJob(job_id="abc123", rubric=RUBRIC, stage="failed", message="slice: no such column x"))
    at = AppTest.from_file(str(ROOT / "app" / "page_scripts" / "search.py"), default_timeout=60)
    at.session_state["search-job"] = str(failed)
    at.run()
    assert any("Scan failed: slice: no such column x" in e.value for e in at.error)
    gone = scan_job_path(db, "def456")  # a pid no process has: the scan was killed midway
    write_scan_job(gone, ScanJob(job_id="def456", rubric=RUBRIC, stage="model", done=2, total=6, pid=2 ** 22 + 1))
    assert not scan_running(read_scan_job(gone))
    at.session_state["search-job"] = str(gone)
    at.run()
    assert any("stopped (its process is gone)" in e.value for e in at.error)
