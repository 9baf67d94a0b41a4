"""DuckDB lets one process hold the file: opens wait for the holder, then fail with a clear message."""
import subprocess
import sys
import textwrap

import pytest
from foundation_records import fixture_trajectories

from trajscope.warehouse import WarehouseBusy, ingest_trajectories, open_readonly

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


def test_a_long_export_filter_is_stopped_at_its_time_limit_so_an_ingest_gets_the_file(tmp_path):
    import threading

    from trajscope.app.console import QueryTimeout, run_export_query
    from trajscope.format import write_jsonl
    from trajscope.warehouse import ReadLimits

    db, log = tmp_path / "w.duckdb", tmp_path / "more.jsonl"
    ingest_trajectories(db, fixture_trajectories()[:1])
    with open(log, "wb") as out:
        write_jsonl(fixture_trajectories(), out)
    refused: list[Exception] = []

    def long_filter() -> None:
        # No equality between the two sides: DuckDB cannot hash-join it, so it must test all 10^13 pairs
        # (an equi-join `a % 7 = b` once finished inside the second on a fast CI machine). The count is
        # (all but surely) zero, so nothing stops the scan early.
        try:
            run_export_query(db, "runs", "(SELECT count(*) FROM range(100000000) a, range(100000) b "
                             "WHERE hash(a.range * 100003 + b.range) = 42) > 0", 10,
                             limits=ReadLimits(timeout_s=1.0))
        except Exception as exc:  # noqa: BLE001 - any other outcome is reported by the assertion below
            refused.append(exc)

    reader = threading.Thread(target=long_filter)
    reader.start()
    try:
        # `trajscope ingest` in its own process waits out the reader's lock (for up to 60 s); the
        # filter's time limit frees the file long before.
        ingest = subprocess.run([sys.executable, "-m", "trajscope", "ingest", str(log), "--db", str(db)],
                                capture_output=True, text=True, timeout=300)
    finally:
        reader.join()
    assert ingest.returncode == 0, ingest.stdout + ingest.stderr
    assert refused, "the filter finished inside its 1 s time limit; it should run for hours"
    assert isinstance(refused[0], QueryTimeout) and "time limit of 1 s" in str(refused[0]), repr(refused[0])
    with open_readonly(db) as con:
        assert con.execute("SELECT count(*) FROM trajectories").fetchall() == [(4,)]


def test_no_connection_draws_duckdbs_progress_bar_on_stdout(tmp_path):
    # The bar would corrupt a CSV or JSON that `trajscope sql` / `export` writes to stdout.
    from trajscope.warehouse import ForbiddenStatement, open_read, open_warehouse

    db = tmp_path / "w.duckdb"
    with open_warehouse(db) as con:
        assert con.execute("SELECT current_setting('enable_progress_bar')").fetchone()[0] is False
    with open_read(db) as con:
        assert con.execute("SELECT current_setting('enable_progress_bar')").fetchone()[0] is False
        assert con.execute("SELECT current_setting('lock_configuration')").fetchone()[0] is True
        # A read session runs SELECTs only: the SET never reaches DuckDB (whose settings are locked anyway).
        with pytest.raises(ForbiddenStatement, match="SET is not allowed"):
            con.execute("SET enable_progress_bar = true")
