"""A connection keeps DuckDB's lock while this process opens the file again: DuckDB's lock is a POSIX record lock,
lost when the process closes any descriptor of the file, so neither a second connection's header check nor a
hash of the file may read it in this process."""
import hashlib
import subprocess
import sys

import duckdb
from foundation_records import fixture_trajectories

from trajscope.analysis.report._context import file_digest, forget_digests
from trajscope.warehouse import file_sha256, ingest_trajectories, open_readonly, open_warehouse

WRITER = ("import duckdb, sys\ntry:\n    duckdb.connect(sys.argv[1]).close()\n    print('writer got in')\n"
          "except duckdb.Error:\n    print('writer refused')\n")


def _writer(db) -> str:
    return subprocess.run([sys.executable, "-c", WRITER, str(db)], capture_output=True, text=True,
                          timeout=60).stdout.strip()


def _warehouse(tmp_path):
    db = tmp_path / "w.duckdb"
    ingest_trajectories(db, fixture_trajectories())
    return db


def test_the_premise_a_python_read_of_the_file_frees_duckdbs_lock(tmp_path):
    db = _warehouse(tmp_path)
    with duckdb.connect(str(db), read_only=True):
        assert _writer(db) == "writer refused"
        open(db, "rb").close()
        assert _writer(db) == "writer got in"  # why the product never reads the file in the process


def test_a_second_connection_keeps_the_first_ones_lock(tmp_path):
    db = _warehouse(tmp_path)
    with open_readonly(db) as first:
        with open_readonly(db) as second:
            assert second.execute("SELECT count(*) FROM trajectories").fetchone()[0] == 4
        assert _writer(db) == "writer refused"
        assert first.execute("SELECT count(*) FROM trajectories").fetchone()[0] == 4
    with open_warehouse(db):  # and a writer's lock, the same way
        with open_warehouse(db):
            pass
        assert _writer(db) == "writer refused"
    assert _writer(db) == "writer got in"


def test_hashing_the_file_keeps_the_lock(tmp_path):
    db = _warehouse(tmp_path)
    expected = hashlib.sha256(db.read_bytes()).hexdigest()
    forget_digests(db)
    with open_readonly(db):
        assert file_sha256(db) == expected
        assert file_digest(db) == expected  # the report's footnote, not cached yet
        assert _writer(db) == "writer refused"


def test_a_new_file_at_a_known_inode_still_gets_its_header_checked(tmp_path):
    # The header is skipped for a file this process has connected to; a file that reuses its inode number is not it.
    from trajscope.warehouse import WarehouseFileError, _file_lock

    db = _warehouse(tmp_path)
    with open_readonly(db):
        pass
    st = db.stat()
    assert (st.st_dev, st.st_ino) in _file_lock._CONNECTED
    with open(db, "r+b") as fh:  # the same inode, no longer DuckDB's
        fh.write(b"SQLite format 3\x00" + b"\x00" * 100)
    try:
        with open_readonly(db):
            raise AssertionError("opened a file that is not a warehouse")
    except WarehouseFileError as exc:
        assert "SQLite" in str(exc) and str(db) in str(exc)
