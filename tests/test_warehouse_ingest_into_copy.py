"""A log past one batch loads into a copy of the existing warehouse, committed batch by batch, and the copy takes
the warehouse's name once complete: the same rows and report as one transaction, the old bytes on any failure."""
import hashlib
import os
from collections import namedtuple

import pytest
from foundation_records import fixture_trajectories

from trajscope.format import RecordError, encode, write_jsonl
from trajscope.runtime._disk_room import room_needed
from trajscope.warehouse import (
    NoRoomForIngest,
    _loader,
    ingest_paths,
    ingest_trajectories,
    open_readonly,
    read_trajectory,
)

TABLES = ("runs", "questions", "trajectories", "steps", "candidates", "reads", "register_events", "judgments")


def _counts(db):
    with open_readonly(db) as con:
        return {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}


def _sha256(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _log(tmp_path):
    """The fixture records with the first one changed, so the ingest meets a stored, a changed and new records."""
    first, *rest = fixture_trajectories()
    first.final_answer = "changed answer"
    log = tmp_path / "a.jsonl"
    with open(log, "wb") as fh:
        write_jsonl([first, *rest], fh)
    return log


@pytest.fixture(autouse=True)
def _copy_any_log_past_a_batch(monkeypatch):
    # The fixture logs are far smaller than a warehouse file, which alone would keep them in place.
    monkeypatch.setattr(_loader, "_COPY_ABOVE_FILE_FRACTION", 0.0)


def _existing(db):
    ingest_trajectories(db, fixture_trajectories()[:2])
    return db


def test_a_log_past_one_batch_loads_into_a_copy_committed_batch_by_batch(tmp_path, monkeypatch):
    log = _log(tmp_path)
    whole = _existing(tmp_path / "whole.duckdb")
    expected = ingest_paths(whole, [log])  # one batch: in place, one transaction
    assert (expected.new, expected.replaced, expected.unchanged) == (2, 1, 1)

    db = _existing(tmp_path / "w.duckdb")
    inode = db.stat().st_ino
    monkeypatch.setattr(_loader, "_BATCH_BYTES", 600)  # one or two records per batch
    seen = []
    load_batch = _loader._load_batch

    def observing(con, batch, *args, **kwargs):
        sides = [p.name for p in tmp_path.glob(".trajscope-ingest-*") if p.suffix == ".duckdb"]
        with con.cursor() as other:  # its own transaction: sees only what was committed in the copy
            committed = other.execute("SELECT count(*) FROM trajectories").fetchone()[0]
        seen.append((db.stat().st_ino, sides, committed))
        load_batch(con, batch, *args, **kwargs)

    monkeypatch.setattr(_loader, "_load_batch", observing)
    report = ingest_paths(db, [log])
    assert (report.new, report.replaced, report.unchanged) == (expected.new, expected.replaced, expected.unchanged)
    assert len(seen) >= 3
    assert all(ino == inode and len(sides) == 1 for ino, sides, _ in seen)  # the old file kept its name meanwhile
    committed = [c for *_, c in seen]
    assert committed[0] == 2 and committed[-1] > 2  # the copy started from the stored rows; batches were committed
    assert db.stat().st_ino != inode  # the copy took the name
    assert not list(tmp_path.glob(".trajscope-ingest-*"))
    assert _counts(db) == _counts(whole)
    with open_readonly(db) as con, open_readonly(whole) as ref:
        for t in fixture_trajectories():
            assert read_trajectory(con, t.trajectory_id) == read_trajectory(ref, t.trajectory_id)
        assert read_trajectory(con, fixture_trajectories()[0].trajectory_id).final_answer == "changed answer"
        facts = "SELECT * FROM trajectory_facts ORDER BY trajectory_id"
        assert con.execute(facts).fetchall() == ref.execute(facts).fetchall()
    again = ingest_paths(db, [log])  # and from the copy, as from any warehouse: nothing new
    assert (again.new, again.replaced, again.unchanged) == (0, 0, 4)


def test_a_bad_line_late_in_a_copied_load_leaves_the_warehouse_its_bytes(tmp_path, monkeypatch):
    db = _existing(tmp_path / "w.duckdb")
    digest, inode = _sha256(db), db.stat().st_ino
    lines = [encode(t).decode() for t in fixture_trajectories()] * 3 + ['{"trajectory_id": "broken"}']
    bad = tmp_path / "late.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    monkeypatch.setattr(_loader, "_BATCH_BYTES", 600)
    with pytest.raises(RecordError) as info:
        ingest_paths(db, [bad])
    assert info.value.line == 13
    assert _sha256(db) == digest and db.stat().st_ino == inode
    assert sorted(p.name for p in tmp_path.iterdir()) == ["late.jsonl", "w.duckdb"]  # no copy, no WAL


def test_a_linked_warehouse_keeps_its_link(tmp_path, monkeypatch):
    real = _existing(tmp_path / "real.duckdb")
    link = tmp_path / "link.duckdb"
    link.symlink_to(real)
    monkeypatch.setattr(_loader, "_BATCH_BYTES", 600)
    ingest_paths(link, [_log(tmp_path)])
    assert link.is_symlink() and link.resolve() == real  # the file it names was replaced, the link kept
    assert _counts(real)["trajectories"] == 4


def test_a_hard_linked_warehouse_loads_in_place(tmp_path, monkeypatch):
    # A rename would take only one of its names to the new rows.
    db = _existing(tmp_path / "w.duckdb")
    other = tmp_path / "other-name.duckdb"
    os.link(db, other)
    inode = db.stat().st_ino
    monkeypatch.setattr(_loader, "_BATCH_BYTES", 600)
    ingest_paths(db, [_log(tmp_path)])
    assert db.stat().st_ino == other.stat().st_ino == inode
    assert _counts(other)["trajectories"] == 4


def test_the_room_check_counts_the_copy(tmp_path, monkeypatch):
    db = _existing(tmp_path / "w.duckdb")
    log = _log(tmp_path)
    digest = _sha256(db)
    monkeypatch.setattr(_loader, "_BATCH_BYTES", 600)
    free = room_needed(log.stat().st_size) + 2**20  # room for the log's rows, not for a copy of the file too
    assert free < room_needed(log.stat().st_size, db.stat().st_size)
    vfs = namedtuple("vfs", "f_bavail f_frsize")
    monkeypatch.setattr(os, "statvfs", lambda path: vfs(f_bavail=free // 4096, f_frsize=4096))
    with pytest.raises(NoRoomForIngest, match=r"a copy of the [0-9.]+ MB warehouse, twice its"):
        ingest_paths(db, [log])
    assert _sha256(db) == digest
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.jsonl", "w.duckdb"]


def test_an_open_that_meets_the_copy_taking_the_name_opens_the_name_again(tmp_path, monkeypatch):
    # The window: a writer opened the old file just before the copy's rename and took its lock once the ingest
    # let it go. It must not write into the replaced file, where its rows would be lost.
    import duckdb

    from trajscope.warehouse import _file_lock, open_warehouse

    db = _existing(tmp_path / "w.duckdb")
    copy = tmp_path / "copy.duckdb"
    ingest_trajectories(copy, fixture_trajectories())
    connect, calls = duckdb.connect, []

    def renamed_meanwhile(database, *args, **kwargs):
        con = connect(database, *args, **kwargs)
        calls.append(database)
        if len(calls) == 1:
            os.replace(copy, db)
        return con

    monkeypatch.setattr(_file_lock.duckdb, "connect", renamed_meanwhile)
    with open_warehouse(db) as con:
        assert con.execute("SELECT count(*) FROM trajectories").fetchone()[0] == 4  # the copy's rows, not the old 2
    assert len(calls) == 2


def test_a_log_smaller_than_the_file_loads_in_place_and_its_room_counts_the_transaction(tmp_path, monkeypatch):
    db = _existing(tmp_path / "w.duckdb")
    log = _log(tmp_path)
    inode = db.stat().st_ino
    monkeypatch.setattr(_loader, "_BATCH_BYTES", 600)
    monkeypatch.setattr(_loader, "_COPY_ABOVE_FILE_FRACTION", 1.0)
    assert log.stat().st_size < db.stat().st_size
    free = room_needed(log.stat().st_size) + log.stat().st_size  # a side file's bound would pass, not this one
    vfs = namedtuple("vfs", "f_bavail f_frsize")
    with monkeypatch.context() as m:
        m.setattr(os, "statvfs", lambda path: vfs(f_bavail=free // 4096, f_frsize=4096))
        with pytest.raises(NoRoomForIngest, match=r"\(5 times its [0-9.]+ MB of logs"):
            ingest_paths(db, [log])
    report = ingest_paths(db, [log])
    assert report.new == 2 and db.stat().st_ino == inode  # loaded in place


def test_two_ingests_through_copies_at_once_lose_no_rows(tmp_path):
    # Each holds the warehouse's lock while it loads its copy; the second waits, then copies what the first left.
    import subprocess
    import sys
    import time

    db = _existing(tmp_path / "w.duckdb")
    logs = []
    for name in ("a", "b"):
        records = []
        for t in fixture_trajectories():
            t.trajectory_id = f"{name}-{t.trajectory_id}"
            t.run.run_id = f"{name}-{t.run.run_id}"
            records.append(t)
        log = tmp_path / f"{name}.jsonl"
        with open(log, "wb") as fh:
            write_jsonl(records, fh)
        logs.append(log)
    script = ("import sys, time, trajscope.warehouse._loader as L\n"
              "L._BATCH_BYTES = 600\nL._COPY_ABOVE_FILE_FRACTION = 0.0\n"
              "orig = L._load_batch\n"
              "def slow(*a, **k):\n    orig(*a, **k); time.sleep(0.3)\n"
              "L._load_batch = slow\n"
              "r = L.ingest_paths(sys.argv[1], [sys.argv[2]])\nprint('new', r.new, flush=True)\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "TMPDIR": str(tmp_path)}
    procs = []
    for log in logs:
        procs.append(subprocess.Popen([sys.executable, "-c", script, str(db), str(log)], env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        time.sleep(0.5)  # the first holds the lock before the second asks for it
    outputs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [err[-2000:] for _, err in outputs]
    assert [out.strip() for out, _ in outputs] == ["new 4", "new 4"]
    with open_readonly(db) as con:
        ids = {r[0] for r in con.execute("SELECT trajectory_id FROM trajectories").fetchall()}
    assert len(ids) == 2 + 4 + 4 and sum(i.startswith(("a-", "b-")) for i in ids) == 8
    assert not list(tmp_path.glob(".trajscope-ingest-*"))


def test_a_copy_that_fails_names_the_reason_and_leaves_the_warehouse(tmp_path, monkeypatch):
    db = _existing(tmp_path / "w.duckdb")
    digest = _sha256(db)
    monkeypatch.setattr(_loader, "_BATCH_BYTES", 600)
    monkeypatch.setattr(_loader, "_COPY_SCRIPT", "import sys; sys.exit(28)")  # what a full disk makes it exit with
    with pytest.raises(OSError) as info:
        ingest_paths(db, [_log(tmp_path)])
    assert info.value.errno == 28 and info.value.strerror == os.strerror(28)
    assert _sha256(db) == digest
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.jsonl", "w.duckdb"]
