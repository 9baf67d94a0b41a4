"""The Upload page runs the same import as `trajscope ingest`: report, declared capabilities, one conversion."""
from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from trajscope.warehouse import open_readonly

ROOT = Path(__file__).resolve().parent.parent
TRIALS = ROOT / "tests" / "fixtures" / "importers" / "react_trials.txt"


def test_upload_page_shows_the_import_report_and_ingests_a_declared_profile(tmp_path, monkeypatch):
    db = tmp_path / "w.duckdb"
    monkeypatch.setenv("TRAJSCOPE_DB", str(db))
    at = AppTest.from_file(str(ROOT / "app" / "page_scripts" / "upload.py"), default_timeout=60).run()
    at.selectbox(key="upload-declare-judgments").set_value("no")
    at.file_uploader(key="upload-file").set_value(("trials.txt", TRIALS.read_bytes(), "text/plain")).run()
    assert not at.exception, [e.message for e in at.exception]
    assert {m.label: m.value for m in at.metric} == {"Format": "react", "Valid records": "5", "Errors": "0"}
    report = at.code[0].value
    assert report.startswith("trials.txt (react): 5 trajectories in 2 run(s)")
    assert "duplicates dropped: 1" in report and "judgments=no*" in report
    prepared = at.session_state["upload-prepared"]
    at.button(key="upload-ingest").click().run()
    # (the page link to Runs needs the app's navigation, which a page opened alone lacks)
    assert any("5 new" in s.value for s in at.success)
    assert not prepared.folder.exists()  # the upload's temp files are gone once it is ingested
    with open_readonly(db) as con:
        rows = con.execute("SELECT DISTINCT t.source_file, c.judgments, c.declared FROM trajectories t "
                           "JOIN run_capabilities c USING (run_id)").fetchall()
    assert rows == [("upload:trials.txt", False, ["judgments"])]


F = ROOT / "tests" / "fixtures" / "importers"


def _open_upload_page(tmp_path, monkeypatch):
    db = tmp_path / "w.duckdb"
    monkeypatch.setenv("TRAJSCOPE_DB", str(db))
    return db, AppTest.from_file(str(ROOT / "app" / "page_scripts" / "upload.py"), default_timeout=60).run()


def test_upload_page_reads_a_log_of_any_shape_through_a_mapping_file(tmp_path, monkeypatch):
    db, at = _open_upload_page(tmp_path, monkeypatch)
    at.file_uploader(key="upload-mapping").set_value(("mapped.yaml", (F / "mapped.yaml").read_bytes(), "text/yaml"))
    log = (F / "mapped.jsonl").read_bytes()
    at.file_uploader(key="upload-file").set_value(("agent.jsonl", log, "application/json")).run()
    assert not at.exception, [e.message for e in at.exception]
    expected = sum(1 for line in log.splitlines() if line.strip())
    assert {m.label: m.value for m in at.metric} == {"Format": "mapped", "Valid records": str(expected), "Errors": "0"}
    at.button(key="upload-ingest").click().run()
    with open_readonly(db) as con:
        rows = con.execute("SELECT t.question_id, q.gold_answer FROM trajectories t JOIN questions q "
                           "USING (dataset, question_id) ORDER BY 1").fetchall()
    assert len(rows) == expected and ("m-1", "Lima") in rows


def test_upload_page_names_the_mapping_file_when_the_mapping_is_wrong(tmp_path, monkeypatch):
    _, at = _open_upload_page(tmp_path, monkeypatch)
    bad = (F / "mapped.yaml").read_text().replace("question_id: meta.uid", "question_idd: meta.uid")
    at.file_uploader(key="upload-mapping").set_value(("my-mapping.yaml", bad.encode(), "text/yaml"))
    at.file_uploader(key="upload-file").set_value(
        ("agent.jsonl", (F / "mapped.jsonl").read_bytes(), "application/json")).run()
    assert not at.exception, [e.message for e in at.exception]
    prepared = at.session_state["upload-prepared"]
    assert [(e.path, e.field) for e in prepared.errors] == [("my-mapping.yaml", "question_idd")]
    assert not prepared.folder.exists()


def test_upload_page_joins_a_questions_file_and_applies_a_patterns_file(tmp_path, monkeypatch):
    db, at = _open_upload_page(tmp_path, monkeypatch)
    text = "Question: Where is the Louvre?\nAction 1: Finish[Lyon]\nObservation 1: WRONG\nGold: Paris, France\n"
    patterns = b'gold: "^Gold: (?P<gold>.*)$"\nverdict_correct: "RIGHT"\nverdict_incorrect: "WRONG"\n'
    at.file_uploader(key="upload-patterns").set_value(("p.yaml", patterns, "text/yaml"))
    at.file_uploader(key="upload-questions").set_value(
        ("q.json", (F / "react_questions.json").read_bytes(), "application/json"))
    at.file_uploader(key="upload-file").set_value(("t.txt", text.encode(), "text/plain")).run()
    assert not at.exception, [e.message for e in at.exception]
    (t,) = at.session_state["upload-prepared"].preview
    assert t.question.gold_answer == "Paris, France" and t.question.question_type == "bridge"
    assert [j.score for j in t.judgments] == [0.0]  # the verdict came from the patterns file's wording


def test_upload_page_keeps_runs_apart_that_disagree_on_a_gold_when_asked(tmp_path, monkeypatch):
    import msgspec
    from foundation_records import fixture_trajectories

    from trajscope.format import encode
    from trajscope.warehouse import ingest_trajectories

    db, at = _open_upload_page(tmp_path, monkeypatch)
    stored = fixture_trajectories()[0]
    ingest_trajectories(db, [stored])
    other = msgspec.structs.replace(
        stored, trajectory_id="other-run-q", run=msgspec.structs.replace(stored.run, run_id="other-run"),
        question=msgspec.structs.replace(stored.question, gold_answer="a different gold"))
    at.file_uploader(key="upload-file").set_value(("other.jsonl", encode(other) + b"\n", "application/json")).run()
    at.button(key="upload-ingest").click().run()
    assert any("conflicting gold_answer" in e.value for e in at.error), [e.value for e in at.error]
    at.run()  # the same upload again: converted afresh, so it can be ingested once the cause is fixed
    assert at.button(key="upload-ingest") is not None and not at.exception
    at.checkbox(key="upload-per-run-questions").check().run()
    at.button(key="upload-ingest").click().run()
    assert any("1 new" in s.value for s in at.success), [s.value for s in at.success]
    with open_readonly(db) as con:
        golds = con.execute("SELECT dataset, gold_answer FROM questions ORDER BY 1").fetchall()
    assert len(golds) == 2 and {g for _, g in golds} == {stored.question.gold_answer, "a different gold"}


TAU = Path("../shared/data/external_logs/formats/openai_chat_tool_calls/gpt-4o-airline.json")


def test_upload_page_keys_unnamed_questions_under_the_dataset_field(tmp_path, monkeypatch):
    import json

    from trajscope.ingest.importers import DATASET_HELP

    db, at = _open_upload_page(tmp_path, monkeypatch)
    records = json.loads(TAU.read_text())  # one record per task and trial, naming no dataset
    tasks = {str(r["task_id"]) for r in records}
    field = at.text_input(key="upload-dataset")
    assert field.label == "Dataset (benchmark name)" and field.help == DATASET_HELP
    field.set_value("tau_bench_airline")
    at.file_uploader(key="upload-file").set_value((TAU.name, TAU.read_bytes(), "application/json")).run()
    assert not at.exception, [e.message for e in at.exception]
    report = at.code[0].value
    assert f"dataset: {len(records)} trajectories keyed under 'tau_bench_airline' (--dataset)" in report
    at.button(key="upload-ingest").click().run()
    assert any(f"{len(records)} new" in s.value for s in at.success), [s.value for s in at.success]
    with open_readonly(db) as con:
        questions = con.execute("SELECT dataset, question_id FROM questions").fetchall()
    assert len(tasks) == 50 and set(questions) == {("tau_bench_airline", t) for t in tasks}
    assert len(questions) == len(tasks)
