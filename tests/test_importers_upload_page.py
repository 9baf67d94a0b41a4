"""The Upload page runs the same import as `trajscope ingest`: report, declared capabilities, one conversion."""
from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from warehouse import open_readonly

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
