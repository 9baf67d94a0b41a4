"""DuckDB lets one process hold the file: opens wait for the holder, then fail with a clear message."""
import subprocess
import sys
import textwrap

import pytest

from warehouse import WarehouseBusy, ingest_trajectories, open_readonly
from foundation_records import fixture_trajectories

HOLD = textwrap.dedent("""
    import sys, time, duckdb
    con = duckdb.connect(sys.argv[1])
    print("locked", flush=True)
    time.sleep(float(sys.argv[2]))
    con.close()
""")


def _hold(db, seconds):
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(db), str(seconds)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "locked"
    return proc


def test_reader_waits_for_a_writer_then_reads(tmp_path):
    db = tmp_path / "w.duckdb"
    ingest_trajectories(db, fixture_trajectories())
    holder = _hold(db, 1.5)
    try:
        with open_readonly(db, timeout_s=30) as con:
            assert con.execute("SELECT count(*) FROM trajectories").fetchall() == [(4,)]
        assert holder.poll() is not None, "the read must have waited for the holder to finish"
    finally:
        holder.wait()


def test_writer_waits_for_a_holder_then_ingests(tmp_path):
    db = tmp_path / "w.duckdb"
    ingest_trajectories(db, fixture_trajectories()[:1])
    holder = _hold(db, 1.5)
    try:
        report = ingest_trajectories(db, fixture_trajectories())
        assert report.new == 3 and report.unchanged == 1
    finally:
        holder.wait()


def test_a_lock_held_past_the_timeout_is_a_clear_error(tmp_path):
    db = tmp_path / "w.duckdb"
    ingest_trajectories(db, fixture_trajectories()[:1])
    holder = _hold(db, 5)
    try:
        with pytest.raises(WarehouseBusy, match="locked by another process"):
            with open_readonly(db, timeout_s=0.5):
                pass
    finally:
        holder.kill()
        holder.wait()
