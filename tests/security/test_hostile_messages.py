"""One line, no traceback, and an exit status that says whether the work was done: `run` when every question
errored, `--param gate=[1]`, `export-traces` and `fork` on a run ingested from a canonical log without
`metadata`, and every `fork --where` refusal."""
from __future__ import annotations

import hashlib
import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "fixtures" / "app"))

from app_fixture_records import app_trajectories  # noqa: E402

from trajscope.format import encode  # noqa: E402


def _trajscope(*args: str, cwd: Path) -> tuple[int, list[str]]:
    child = subprocess.run([sys.executable, "-m", "trajscope", *args], capture_output=True, text=True,
                           timeout=300, cwd=cwd)
    lines = (child.stdout + child.stderr).splitlines()
    assert not any("Traceback" in line for line in lines), "\n".join(lines)
    return child.returncode, lines


def _one_error(lines: list[str]) -> str:
    errors = [line for line in lines if line.startswith("Error:")]
    assert len(errors) == 1, "\n".join(lines)
    return errors[0]


def _closed_port() -> int:
    with socket.socket() as sock:  # bound, never listening: every connection is refused
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_a_run_whose_every_question_errored_exits_non_zero(tmp_path):
    rc, lines = _trajscope("run", "--dataset", "demo", "--controller", "direct", "--model", "m", "--base-url",
                           f"http://127.0.0.1:{_closed_port()}/v1", "--n", "2", "--no-ingest", "--out", "runs",
                           cwd=tmp_path)
    assert rc != 0 and "ended in an error" in _one_error(lines)
    logged = [json.loads(line) for log in (tmp_path / "runs").glob("*.jsonl") for line in log.read_text().splitlines()]
    assert len(logged) == 2 and all(t["end_reason"] == "error" for t in logged)
    assert all(t["error"].startswith("connection") and "timeout" not in t["error"] for t in logged), logged


def test_a_list_for_a_plain_parameter_is_one_line(tmp_path):
    rc, lines = _trajscope("run", "--dataset", "demo", "--controller", "read_gate", "--param", "gate=[1]",
                           "--n", "1", "--no-ingest", "--out", "runs", cwd=tmp_path)
    error = _one_error(lines)
    assert rc != 0 and "parameter gate must be like" in error and "not a list" in error, error
    assert not (tmp_path / "runs").exists()


@pytest.fixture
def without_metadata(tmp_path) -> Path:
    """A warehouse ingested from a canonical log whose records have no `metadata` (ingest accepts them)."""
    with open(tmp_path / "canon.jsonl", "wb") as fh:
        for trajectory in app_trajectories()[:3]:
            record = json.loads(encode(trajectory))
            record.pop("metadata", None)
            fh.write(json.dumps(record).encode() + b"\n")
    rc, lines = _trajscope("ingest", "canon.jsonl", "--db", "w.duckdb", cwd=tmp_path)
    assert rc == 0, lines
    return tmp_path / "w.duckdb"


def test_export_traces_reads_back_a_run_logged_without_metadata(without_metadata, tmp_path):
    run_id = json.loads((tmp_path / "canon.jsonl").read_text().splitlines()[0])["run"]["run_id"]
    rc, lines = _trajscope("export-traces", run_id, "--format", "atif", "--out", "out.jsonl", "--db", "w.duckdb",
                           cwd=tmp_path)
    assert rc == 0, lines
    assert len((tmp_path / "out.jsonl").read_text().splitlines()) == sum(
        json.loads(line)["run"]["run_id"] == run_id for line in (tmp_path / "canon.jsonl").read_text().splitlines())


def test_fork_of_a_trajectory_logged_without_metadata_is_one_line(without_metadata, tmp_path):
    trajectory_id = json.loads((tmp_path / "canon.jsonl").read_text().splitlines()[0])["trajectory_id"]
    before = hashlib.sha256(without_metadata.read_bytes()).hexdigest()
    rc, lines = _trajscope("fork", trajectory_id, "--at", "1", "-i", "reject_final", "--db", "w.duckdb",
                           "--no-ingest", "--out", "forks", cwd=tmp_path)
    error = _one_error(lines)
    assert rc != 0 and "metadata" not in error, error  # the fixture's dataset is not on disk: said in one line
    assert hashlib.sha256(without_metadata.read_bytes()).hexdigest() == before


@pytest.mark.parametrize("where, expected", [
    ("1=1; DROP TABLE trajectories", "syntax error"),
    ("read_csv('/etc/passwd') IS NOT NULL", "read_csv"),
    ("no_such_column = 1", "no_such_column"),
    ("correct = ", "syntax error"),
    ("(SELECT count(*) FROM range(10)) > 0 OR getenv('HOME') = ''", "getenv"),
])
def test_every_fork_where_refusal_is_one_line(where, expected, without_metadata, tmp_path):
    run_id = json.loads((tmp_path / "canon.jsonl").read_text().splitlines()[0])["run"]["run_id"]
    before = hashlib.sha256(without_metadata.read_bytes()).hexdigest()
    rc, lines = _trajscope("fork", "--runs", run_id, "--where", where, "--at", "1", "-i", "reject_final",
                           "--db", "w.duckdb", "--no-ingest", cwd=tmp_path)
    error = _one_error(lines)
    assert rc != 0 and error.startswith("Error: --where") and expected in error, error
    assert hashlib.sha256(without_metadata.read_bytes()).hexdigest() == before


def test_app_on_a_symlink_loop_is_one_line(tmp_path):
    (tmp_path / "loop-a").symlink_to(tmp_path / "loop-b")
    (tmp_path / "loop-b").symlink_to(tmp_path / "loop-a")
    rc, lines = _trajscope("app", "--db", "loop-a", "--port", str(_closed_port()), cwd=tmp_path)
    error = _one_error(lines)
    assert rc != 0 and "loop-a" in error and "Symlink loop" in error, error


def test_an_upload_into_a_db_that_is_not_a_warehouse_is_an_error_row(tmp_path, monkeypatch):
    from trajscope.app.upload import prepare_upload

    monkeypatch.setenv("TRAJSCOPE_UPLOAD_TMP", str(tmp_path / "uploads"))
    text = tmp_path / "notes.duckdb"
    text.write_text("not a warehouse\n")
    log = Path(__file__).parents[1] / "fixtures" / "importers" / "autoact.jsonl"
    prepared = prepare_upload("run.jsonl", log.read_bytes(), db_path=text)
    assert not prepared.ok and len(prepared.errors) == 1
    assert "notes.duckdb: is text, not a trajscope warehouse" in str(prepared.errors[0])
    assert text.read_text() == "not a warehouse\n"
    assert list((tmp_path / "uploads" / "trajscope-uploads").iterdir()) == []  # the refused upload is not kept


def test_a_fifo_log_is_named_a_fifo_not_a_missing_file(tmp_path):
    import os

    os.mkfifo(tmp_path / "log.jsonl")
    rc, lines = _trajscope("ingest", "log.jsonl", "--db", "w.duckdb", cwd=tmp_path)
    error = _one_error(lines)
    assert rc != 0 and "is a FIFO (named pipe), not a regular file" in error and "no such file" not in error, error
    assert not (tmp_path / "w.duckdb").exists()


def test_a_sparse_file_of_zeros_is_not_called_text(tmp_path):
    with open(tmp_path / "zeros.duckdb", "wb") as fh:
        fh.truncate(1 << 20)
    rc, lines = _trajscope("sql", "SELECT 1", "--db", "zeros.duckdb", cwd=tmp_path)
    error = _one_error(lines)
    assert rc != 0 and "zero bytes only" in error and "is text" not in error, error
    assert (tmp_path / "zeros.duckdb").read_bytes() == bytes(1 << 20)


def test_a_locked_warehouse_is_waited_out_once_per_read(tmp_path, monkeypatch, warehouse_db):
    # The upgrade's look and the read's own open each waited the whole lock wait: the message said 15 s,
    # the command waited about 30. Counted in waits, not seconds.
    import shutil

    from trajscope.warehouse import WarehouseBusy
    from trajscope.warehouse.read import DEFAULT_LIMITS, _open, open_read

    db = tmp_path / "w.duckdb"
    shutil.copy(warehouse_db, db)
    hold = "import duckdb, sys, time\ncon = duckdb.connect(sys.argv[1])\nprint('held', flush=True)\ntime.sleep(120)"
    holder = subprocess.Popen([sys.executable, "-c", hold, str(db)], stdout=subprocess.PIPE, text=True)
    waits = []
    real = _open.connect_retrying

    def counted(*args, **kwargs):
        try:
            return real(*args, **kwargs)
        except WarehouseBusy:
            waits.append(args[0])
            raise

    monkeypatch.setattr(_open, "connect_retrying", counted)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(WarehouseBusy, match="stayed locked for 1s"):
            with open_read(db, limits=DEFAULT_LIMITS.with_overrides(lock_wait_s=1.0)):
                pass
    finally:
        holder.kill()
        holder.wait()
    assert len(waits) == 1


def test_a_warehouse_of_a_newer_schema_is_refused_on_the_read_path(tmp_path, warehouse_db):
    import shutil

    import duckdb

    db = tmp_path / "newer.duckdb"
    shutil.copy(warehouse_db, db)
    con = duckdb.connect(str(db))
    newer = con.execute("SELECT max(version) + 1 FROM schema_migrations").fetchall()[0][0]
    con.execute("INSERT INTO schema_migrations (version, name) VALUES ($1, 'from the future')", [newer])
    con.close()
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    rc, lines = _trajscope("sql", "SELECT count(*) FROM trajectories", "--db", str(db), cwd=tmp_path)
    error = _one_error(lines)
    assert rc == 3 and f"was written by a newer trajscope (schema {newer}; this one reads up to {newer - 1})" in error
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before
