"""An ingest that runs out of disk (here a file-size limit, RLIMIT_FSIZE, which fails writes the way a full
disk does) ends in one line naming the reason, not a traceback, and leaves the warehouse's bytes as they were:
refused before writing when the room left is under the bound on what it writes (warehouse._disk_room), and
rolled back without touching the file when DuckDB itself meets the limit (warehouse._connection.WRITE_CONFIG)."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections import namedtuple
from pathlib import Path

import duckdb
import msgspec
import pytest
from security_limits import fingerprint

from trajscope.format import encode
from trajscope.runtime._disk_room import room_needed
from trajscope.warehouse import NoRoomForIngest, ingest_paths, ingest_trajectories

ROOT = Path(__file__).parents[2]
sys.path.insert(0, str(ROOT / "tests" / "fixtures" / "app"))
from app_fixture_records import app_trajectories  # noqa: E402

LIMITED = textwrap.dedent("""
    import resource, signal, sys
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG, as with ENOSPC
    cap = int(sys.argv[1])
    if sys.argv[2] == "duckdb":  # no check first, small batches: DuckDB's own write meets the limit
        import trajscope.warehouse._loader as loader
        loader.check_room = lambda *args, **kwargs: None
        loader._BATCH_BYTES = 2**20
        resource.setrlimit(resource.RLIMIT_FSIZE, (cap, cap))
        try:
            loader.ingest_paths(sys.argv[3], [sys.argv[4]], progress=False)
        except duckdb_error as exc:
            print("refused:", str(exc).splitlines()[0])
    else:
        resource.setrlimit(resource.RLIMIT_FSIZE, (cap, cap))
        from trajscope.cli import main
        main(sys.argv[3:])
""").replace("duckdb_error", "__import__('duckdb').Error")


def _warehouse_and_log(tmp_path: Path, n: int) -> tuple[Path, Path]:
    db = tmp_path / "w.duckdb"
    ingest_trajectories(db, app_trajectories())
    base = app_trajectories()[0]
    log = tmp_path / "big.jsonl"
    with open(log, "wb") as out:  # new trajectories whose text does not compress
        for k in range(n):
            t = msgspec.structs.replace(base, trajectory_id=f"{base.run.run_id}::big{k}",
                                        final_answer=os.urandom(1000).hex(),
                                        question=msgspec.structs.replace(base.question, question_id=f"big{k}"))
            out.write(encode(t) + b"\n")
    return db, log


def _big_rows(db: Path) -> int:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute("SELECT count(*) FROM trajectories WHERE question_id LIKE 'big%'").fetchone()[0]


def test_an_ingest_without_room_is_one_line_and_the_warehouse_keeps_its_bytes(tmp_path):
    db, log = _warehouse_and_log(tmp_path, 450)
    before = fingerprint(db)
    cap = db.stat().st_size + 2 * 2**20
    done = subprocess.run([sys.executable, "-c", LIMITED, str(cap), "cli", "ingest", str(log), "--db", str(db)],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    output = done.stdout + done.stderr
    assert done.returncode != 0 and "Traceback" not in output, output[-3000:]
    errors = [line for line in output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and "not enough disk for this ingest" in errors[0], output[-3000:]
    assert "2.0 MB is left under this process's file-size limit" in errors[0] and "nothing was written" in errors[0]
    assert fingerprint(db) == before  # sha256 and row counts
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.jsonl", "w.duckdb"]  # no WAL either


def test_a_load_that_meets_the_limit_inside_duckdb_leaves_the_files_bytes(tmp_path):
    # Past the check (a disk that fills while the ingest runs). A log past one batch loads into a copy of the
    # file, committed batch by batch, and the limit is met there; the file itself is never written, so its hash
    # is unchanged, not only its rows, and the error named is DuckDB's own, not the rollback's.
    db, log = _warehouse_and_log(tmp_path, 2000)
    before = fingerprint(db)
    cap = db.stat().st_size + 2 * 2**20
    done = subprocess.run([sys.executable, "-c", LIMITED, str(cap), "duckdb", str(db), str(log)],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    output = done.stdout + done.stderr
    assert done.returncode == 0 and "refused: " in output and "File too large" in output, output[-3000:]
    assert fingerprint(db) == before and _big_rows(db) == 0


def test_the_check_counts_the_free_disk_too(tmp_path, monkeypatch):
    db, log = _warehouse_and_log(tmp_path, 50)
    before = fingerprint(db)
    vfs = namedtuple("vfs", "f_bavail f_frsize")
    monkeypatch.setattr(os, "statvfs", lambda path: vfs(f_bavail=4, f_frsize=4096))  # 16 KB free
    with pytest.raises(NoRoomForIngest, match=r"0\.0 MB is free on the disk holding") as info:
        ingest_paths(db, [log])
    needed = room_needed(log.stat().st_size, in_place=True)  # a log smaller than the file: one transaction on it
    assert needed == 5 * log.stat().st_size + 16 * 2**20
    assert info.value.errno == 28 and f"it may write up to {needed / 2**20:.1f} MB" in str(info.value)
    assert fingerprint(db) == before
    monkeypatch.undo()
    ingest_paths(db, [log])  # with room, the same ingest loads
    assert _big_rows(db) == 50
