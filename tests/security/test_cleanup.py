"""Disk hygiene: upload folders, output temp files, the CLI's converted logs, query-worker folders and scan
progress files are removed on success, on error and on a refused input; what a killed process left is swept
at the next start (warehouse._stale_dirs, the one sweep)."""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from trajscope.app.jobs import (
    STALE_SCAN_S,
    ScanJob,
    read_scan_job,
    scan_files,
    scan_job_path,
    sweep_stale_scans,
    write_scan_job,
)
from trajscope.app.upload import (
    UPLOAD_MAX_AGE_S,
    discard_upload,
    ingest_upload,
    prepare_upload,
    sweep_stale_uploads,
    upload_root,
)
from trajscope.cli import main
from trajscope.cli.ingest_cmd import INGEST_TMP_PREFIX
from trajscope.format import encode
from trajscope.warehouse import ReadRefused, run_read_query
from trajscope.warehouse.export import OutputRefused, write_output
from trajscope.warehouse.export._output import TMP_PREFIX
from trajscope.warehouse.read._tempdir import PREFIX as READ_PREFIX

ROOT = Path(__file__).parents[2]


def _dead_pid() -> int:
    """The pid of a process that has just ended (so no process has it, barring reuse in the next instant)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def _log_bytes() -> bytes:
    sys.path.insert(0, str(ROOT / "tests" / "fixtures" / "app"))
    from app_fixture_records import upload_trajectories

    return b"".join(encode(t) + b"\n" for t in upload_trajectories())


@pytest.fixture
def uploads(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("TRAJSCOPE_UPLOAD_TMP", str(tmp_path / "tmp"))
    return upload_root()


# -- uploads ---------------------------------------------------------------------------------------------


def test_an_ingested_upload_leaves_no_folder(uploads, tmp_path):
    prepared = prepare_upload("run.jsonl", _log_bytes())
    assert prepared.ok and prepared.folder.is_dir()
    assert list(prepared.folder.iterdir()) == [prepared.canonical]  # only the log to ingest is kept
    ingest_upload(tmp_path / "w.duckdb", prepared)
    assert list(uploads.iterdir()) == []


def test_an_upload_with_errors_is_removed_at_once(uploads):
    prepared = prepare_upload("bad.jsonl", b'{"not": "a trajectory"}\n')
    assert prepared.errors and not prepared.folder.exists()
    assert list(uploads.iterdir()) == []


def test_an_upload_without_records_is_refused_and_removed(uploads):
    prepared = prepare_upload("empty.jsonl", b"\n\n")
    assert not prepared.ok and not prepared.folder.exists()
    assert list(uploads.iterdir()) == []


def test_a_converted_uploads_raw_copy_and_side_files_go_at_once(uploads):
    # A mapped log is converted: neither the saved upload nor its mapping file is kept beside the result.
    fixtures = ROOT / "tests" / "fixtures" / "importers"
    mapping = fixtures / "mapped.yaml"
    prepared = prepare_upload("mapped.jsonl", (fixtures / "mapped.jsonl").read_bytes(),
                              mapping=(mapping.name, mapping.read_bytes()))
    assert prepared.ok, prepared.errors
    assert list(prepared.folder.iterdir()) == [prepared.canonical] and prepared.canonical.name == "canonical.jsonl"
    discard_upload(prepared)
    assert list(uploads.iterdir()) == []


def test_an_upload_that_fails_on_the_server_side_is_removed(uploads, monkeypatch):
    import trajscope.app.upload._check as check

    def disk_full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(check, "convert_file", disk_full)
    with pytest.raises(OSError, match="No space left"):
        prepare_upload("run.jsonl", _log_bytes())
    assert list(uploads.iterdir()) == []


def test_an_ingest_refused_by_the_warehouse_removes_the_upload(uploads, tmp_path):
    prepared = prepare_upload("run.jsonl", _log_bytes())
    db = tmp_path / "w.duckdb"
    db.write_text("not a warehouse")
    with pytest.raises(Exception):  # noqa: B017,PT011 - whichever refusal, the folder must go
        ingest_upload(db, prepared)
    assert list(uploads.iterdir()) == []


def test_uploads_of_a_killed_server_are_swept_at_the_next_upload(uploads):
    dead = uploads / f"upload-{_dead_pid()}-abc"
    dead.mkdir()
    (dead / "canonical.jsonl").write_bytes(b"x" * 1000)
    live = uploads / f"upload-{os.getppid()}-def"  # a running process's folder: kept
    live.mkdir()
    mine = prepare_upload("run.jsonl", _log_bytes())  # this process's upload, pending: kept
    assert not dead.exists() and mine.folder.exists() and live.exists()
    assert sweep_stale_uploads() == []
    discard_upload(mine)


def test_the_page_discards_an_upload_taken_out_of_the_uploader(uploads, tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("TRAJSCOPE_DB", str(tmp_path / "w.duckdb"))
    prepared = prepare_upload("run.jsonl", _log_bytes())
    at = AppTest.from_file(str(ROOT / "app" / "page_scripts" / "upload.py"), default_timeout=60)
    at.session_state["upload-prepared"] = prepared
    at.session_state["upload-prepared-key"] = ("k",)
    at.run()
    assert not at.exception
    assert "upload-prepared" not in at.session_state and list(uploads.iterdir()) == []


def test_an_upload_nobody_ingests_is_swept_after_its_stated_age(uploads):
    old = prepare_upload("old.jsonl", _log_bytes())  # this (live) server's, pending an hour and more
    other = uploads / f"upload-{os.getppid()}-abc"  # another live server's, as old
    other.mkdir()
    _age([old.folder, other], UPLOAD_MAX_AGE_S + 60)
    fresh = prepare_upload("new.jsonl", _log_bytes())  # the sweep runs with every upload
    assert not old.folder.exists() and not other.exists() and fresh.folder.exists()
    _age([fresh.folder], UPLOAD_MAX_AGE_S - 60)
    assert sweep_stale_uploads() == [] and fresh.folder.exists()
    discard_upload(fresh)


def test_an_upload_goes_when_the_browser_session_that_holds_it_ends(uploads, tmp_path, monkeypatch):
    import gc

    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("TRAJSCOPE_DB", str(tmp_path / "w.duckdb"))
    at = AppTest.from_file(str(ROOT / "app" / "page_scripts" / "upload.py"), default_timeout=60).run()
    at.file_uploader(key="upload-file").set_value(("run.jsonl", _log_bytes(), "application/json")).run()
    assert not at.exception
    [folder] = list(uploads.iterdir())  # converted, waiting for the Ingest button
    assert at.session_state["upload-prepared"].folder == folder
    del at  # the session ends: Streamlit drops its session state
    gc.collect()
    assert list(uploads.iterdir()) == []


def test_the_page_converts_again_an_upload_swept_as_abandoned(uploads, tmp_path, monkeypatch):
    monkeypatch.setenv("TRAJSCOPE_DB", str(tmp_path / "w.duckdb"))
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app" / "page_scripts" / "upload.py"), default_timeout=60).run()
    at.file_uploader(key="upload-file").set_value(("run.jsonl", _log_bytes(), "application/json")).run()
    first = at.session_state["upload-prepared"].folder
    _age([first], UPLOAD_MAX_AGE_S + 60)  # the tab was left open for over an hour
    at.run()
    assert not first.exists() and not at.exception
    second = at.session_state["upload-prepared"].folder
    assert second != first and second.is_dir()  # converted again from the file still in the uploader
    at.button(key="upload-ingest").click().run()
    # (the page link to Runs needs the app's navigation, which a page opened alone lacks)
    assert any("Ingested into" in s.value and "new" in s.value for s in at.success), [e.value for e in at.error]
    assert list(uploads.iterdir()) == []


# -- output files ----------------------------------------------------------------------------------------


def _temps(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(TMP_PREFIX))


def test_an_output_leaves_no_temp_file_on_success_error_or_refusal(tmp_path, monkeypatch):
    out = tmp_path / "table.csv"
    write_output(out, "a,b\n1,2\n", db=tmp_path / "w.duckdb")
    assert out.read_text() == "a,b\n1,2\n" and _temps(tmp_path) == []
    with pytest.raises(OutputRefused):  # a refused input: the warehouse itself as --out
        write_output(tmp_path / "w.duckdb", "x", db=tmp_path / "w.duckdb")
    assert _temps(tmp_path) == []

    def failing_replace(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OutputRefused, match="No space left"):
        write_output(out, "a,b\n3,4\n", db=tmp_path / "w.duckdb")
    assert out.read_text() == "a,b\n1,2\n" and _temps(tmp_path) == []


def test_a_killed_exports_temp_file_is_swept_by_the_next_write_into_its_folder(tmp_path):
    left = tmp_path / f"{TMP_PREFIX}{_dead_pid()}-0a1b2c3d.tmp"
    left.write_bytes(b"x" * 1000)
    running = tmp_path / f"{TMP_PREFIX}{os.getppid()}-0a1b2c3d.tmp"  # a live writer's: kept
    running.write_bytes(b"y")
    user = tmp_path / ".trajscope-notes.tmp"  # not named after a process: never ours to remove
    user.write_bytes(b"z")
    write_output(tmp_path / "t.csv", "a\n", db=tmp_path / "w.duckdb")
    assert not left.exists() and running.exists() and user.exists()


def test_export_cli_leaves_no_temp_file_on_a_refused_or_failed_query(warehouse_db, tmp_path):
    for args in (["runs", "--out", str(warehouse_db)],  # refused: the warehouse
                 ["SELECT nope FROM runs", "--out", str(tmp_path / "x.csv")]):  # the query fails
        result = CliRunner().invoke(main, ["export", *args, "--format", "csv", "--db", str(warehouse_db)])
        assert result.exit_code != 0 and "Traceback" not in result.output
    assert _temps(tmp_path) == [] and _temps(warehouse_db.parent) == []


# -- ingest and query-worker folders ---------------------------------------------------------------------


def _ingest_dirs() -> list[Path]:
    # This process's (CliRunner runs the command here): other processes on the machine may be ingesting.
    return sorted(Path(tempfile.gettempdir()).glob(f"{INGEST_TMP_PREFIX}{os.getpid()}-*"))


def test_the_ingest_cli_removes_its_converted_logs_and_sweeps_a_killed_ones(tmp_path):
    dead = Path(tempfile.gettempdir()) / f"{INGEST_TMP_PREFIX}{_dead_pid()}-xyz"
    dead.mkdir()
    (dead / "0-log.canonical.jsonl").write_bytes(b"x" * 1000)
    before = set(_ingest_dirs())
    log = tmp_path / "run.jsonl"
    log.write_bytes(_log_bytes())
    ok = CliRunner().invoke(main, ["ingest", str(log), "--db", str(tmp_path / "w.duckdb")])
    assert ok.exit_code == 0, ok.output
    assert not dead.exists(), "the killed ingest's folder was not swept"
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"not": "a trajectory"}\n')
    refused = CliRunner().invoke(main, ["ingest", str(bad), "--db", str(tmp_path / "w.duckdb")])
    assert refused.exit_code != 0
    assert set(_ingest_dirs()) - before == set(), "an ingest left its folder"


def test_query_worker_folders_go_on_success_on_error_and_after_a_kill(warehouse_db, read_tmp):
    run_read_query(warehouse_db, "SELECT 1")
    with pytest.raises(ReadRefused):
        run_read_query(warehouse_db, "SELECT nope FROM runs")
    assert list(read_tmp.iterdir()) == []
    left = read_tmp / f"{READ_PREFIX}{_dead_pid()}-abc"
    (left / "spill").mkdir(parents=True)
    run_read_query(warehouse_db, "SELECT 1")
    assert list(read_tmp.iterdir()) == []


def test_the_app_sweeps_every_kind_of_leftover_at_start(tmp_path, monkeypatch, read_tmp):
    from trajscope.cli.app_cmd import _sweep_leftovers

    monkeypatch.setenv("TRAJSCOPE_UPLOAD_TMP", str(tmp_path / "tmp"))
    pid = _dead_pid()
    db = tmp_path / "w.duckdb"
    left = [read_tmp / f"{READ_PREFIX}{pid}", upload_root() / f"upload-{pid}-a",
            Path(tempfile.gettempdir()) / f"{INGEST_TMP_PREFIX}{pid}-a"]
    for folder in left:
        folder.mkdir(parents=True)
    old_scan = scan_job_path(db, "old1")
    write_scan_job(old_scan, ScanJob(job_id="old1", rubric="r", stage="done", pid=pid))
    old_scan.with_suffix(".log").write_text("scan output\n")
    _age(scan_files(old_scan), STALE_SCAN_S + 60)
    _sweep_leftovers(db)
    assert [p for p in left if p.exists()] == [] and [p for p in scan_files(old_scan) if p.exists()] == []


# -- scan progress files ---------------------------------------------------------------------------------


def _age(files: list[Path], seconds: float) -> None:
    then = time.time() - seconds
    for file in files:
        if file.exists():
            os.utime(file, (then, then))


def test_stale_scan_files_are_swept_and_running_or_fresh_ones_kept(tmp_path):
    db = tmp_path / "w.duckdb"
    dead = _dead_pid()
    cases = {
        "ended": ScanJob(job_id="ended", rubric="r", stage="done", pid=dead),
        "failed": ScanJob(job_id="failed", rubric="r", stage="failed", pid=dead),
        "killed": ScanJob(job_id="killed", rubric="r", stage="model", pid=dead),
        "running": ScanJob(job_id="running", rubric="r", stage="model", pid=os.getpid()),
    }
    for job_id, job in cases.items():
        path = scan_job_path(db, job_id)
        write_scan_job(path, job)
        path.with_suffix(".log").write_text("output\n")
        _age(scan_files(path), STALE_SCAN_S + 60)
    fresh = scan_job_path(db, "fresh")  # ended a moment ago: its page may still come for it
    write_scan_job(fresh, ScanJob(job_id="fresh", rubric="r", stage="done", pid=dead))
    orphan_log = db.with_name(f"{db.name}.scan-orphan.log")  # a log whose progress file is gone
    orphan_log.write_text("x")
    _age([orphan_log], STALE_SCAN_S + 60)
    sweep_stale_scans(db)
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == sorted([fresh.name, scan_job_path(db, "running").name,
                           scan_job_path(db, "running").with_suffix(".log").name]), left


def test_the_search_page_removes_an_ended_scans_files_and_still_shows_it(tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from trajscope.warehouse import ingest_trajectories

    sys.path.insert(0, str(ROOT / "tests" / "fixtures" / "app"))
    from app_fixture_records import app_trajectories

    db = tmp_path / "wh.duckdb"
    ingest_trajectories(db, app_trajectories())
    monkeypatch.setenv("TRAJSCOPE_DB", str(db))
    failed = scan_job_path(db, "abc123")
    write_scan_job(failed, ScanJob(job_id="abc123", rubric="r", stage="failed", message="slice: no such column x"))
    failed.with_suffix(".log").write_text("Error: slice: no such column x\n")
    at = AppTest.from_file(str(ROOT / "app" / "page_scripts" / "search.py"), default_timeout=60)
    at.session_state["search-job"] = str(failed)
    at.run()
    assert any("Scan failed: slice: no such column x" in e.value for e in at.error)
    assert [p for p in scan_files(failed) if p.exists()] == [] and read_scan_job(failed) is None
    at.run()  # a rerun shows the same from the session, not "the progress file is gone"
    assert any("Scan failed: slice: no such column x" in e.value for e in at.error)
    assert not at.warning or all("is gone" not in w.value for w in at.warning)


# -- what the Upload page says before ingest ---------------------------------------------------------------


def _records(*edits: dict) -> bytes:
    import json

    sys.path.insert(0, str(ROOT / "tests" / "fixtures" / "app"))
    from app_fixture_records import upload_trajectories

    line = json.loads(encode(upload_trajectories()[0]))
    return b"".join(json.dumps({**line, **edit}).encode() + b"\n" for edit in edits)


def test_an_upload_that_ingest_would_refuse_is_refused_before_it_is_called_valid(uploads):
    # The issue: "1 valid trajectories" for an empty id or one id with two records, which Ingest then
    # refused naming a server temp path.
    for name, data, says in (("empty-id.jsonl", _records({"trajectory_id": ""}), "empty trajectory id"),
                             ("dup.jsonl", _records({}, {"final_answer": "other"}), "duplicate id")):
        prepared = prepare_upload(name, data)
        assert not prepared.ok and len(prepared.errors) == 1, prepared
        error = prepared.errors[0]
        assert error.path == name and says in error.message and str(uploads) not in str(error)
    assert list(uploads.iterdir()) == []


def test_an_upload_with_a_300_character_name_is_checked_under_a_short_one(uploads, tmp_path):
    name = "a" * 300 + ".jsonl"
    prepared = prepare_upload(name, _log_bytes())
    assert prepared.ok and prepared.name == name
    report = ingest_upload(tmp_path / "w.duckdb", prepared)
    assert report.records >= 1 and list(uploads.iterdir()) == []
