"""No --out may overwrite an input: the warehouse, its WAL or a file being read, directly or through a link; a
missing folder, a full device or a name over the limit is one line. And a relative --db (or the default
./trajscope.duckdb) works for the commands whose query runs in a worker process."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from security_limits import fingerprint

from trajscope.cli import main


def _fresh_copy(tmp: Path, warehouse_db: Path) -> tuple[Path, tuple[str, dict[str, int]]]:
    """A copy of the fixture warehouse that a test may aim a command at, and its fingerprint before."""
    db = tmp / "w.duckdb"
    shutil.copy(warehouse_db, db)
    return db, fingerprint(db)


def _write_out(command: list[str], out: Path, db: Path) -> tuple[Result, list[str]]:
    """The command run with --out OUT over --db DB, and the `Error:` lines it printed."""
    result = CliRunner().invoke(main, [*command, "--out", str(out), "--db", str(db)])
    return result, [line for line in result.output.splitlines() if line.startswith("Error:")]


def _out_cases(tmp: Path, db: Path) -> dict[str, tuple[Path, str]]:
    link = tmp / "x.csv"
    link.symlink_to(db)
    hard = tmp / "hard.csv"
    os.link(db, hard)
    wal = db.with_name(db.name + ".wal")
    return {
        "the warehouse": (db, "which this command reads"),
        "a link to it": (link, "through a link"),
        "a hard link to it": (hard, "which this command reads"),
        "its WAL": (wal, "which this command reads"),
        "a missing folder": (tmp / "missing" / "t.csv", "does not exist"),
        "a long name": (tmp / ("n" * 300 + ".csv"), "system limit"),
        "/dev/full": (Path("/dev/full"), "No space left on device"),
    }


@pytest.mark.parametrize("case", ["the warehouse", "a link to it", "a hard link to it", "its WAL", "a missing folder",
                                  "a long name", "/dev/full"])
@pytest.mark.parametrize("command", [["export", "runs", "--format", "csv"], ["export", "runs", "--format", "parquet"],
                                     ["audit-report"]])
def test_an_output_that_is_an_input_or_unwritable_is_one_line(case, command, tmp_path, warehouse_db):
    db, before = _fresh_copy(tmp_path, warehouse_db)
    out, says = _out_cases(tmp_path, db)[case]
    result, errors = _write_out(command, out, db)
    if command[0] == "audit-report" and case == "/dev/full":
        # The fixture warehouse has no audit records: refused before anything is written.
        assert result.exit_code != 0 and len(errors) == 1
    else:
        assert result.exit_code == 1 and len(errors) == 1 and says in errors[0], result.output
    assert "Traceback" not in result.output and result.exception is None or isinstance(result.exception, SystemExit)
    assert fingerprint(db) == before
    assert not db.with_name(db.name + ".wal").exists() or case == "its WAL"


def test_a_report_table_file_linked_to_the_warehouse_is_refused(tmp_path, warehouse_db):
    db, before = _fresh_copy(tmp_path, warehouse_db)
    folder = tmp_path / "tables"
    folder.mkdir()
    (folder / "au_t1.md").symlink_to(db)
    result, errors = _write_out(["report", "audit"], folder, db)
    assert result.exit_code == 1 and len(errors) == 1 and "through a link" in errors[0], result.output
    assert fingerprint(db) == before


def test_an_export_over_an_unrelated_file_replaces_it_and_follows_a_link(tmp_path, warehouse_db):
    target = tmp_path / "old.csv"
    target.write_text("old\n")
    link = tmp_path / "link.csv"
    link.symlink_to(target)
    result = CliRunner().invoke(main, ["export", "runs", "--format", "csv", "--out", str(link), "--db",
                                       str(warehouse_db)])
    assert result.exit_code == 0, result.output
    assert link.is_symlink() and target.read_text().startswith("run_id")


@pytest.mark.parametrize("command", [["sql", "SELECT count(*) AS n FROM trajectories", "--format", "csv"],
                                     ["export", "SELECT count(*) AS n FROM trajectories", "--format", "csv",
                                      "--out", "n.csv"]])
@pytest.mark.parametrize("relative", ["rel.duckdb", "sub/rel.duckdb", None])
def test_a_relative_or_default_db_works_in_the_query_worker(command, relative, tmp_path, warehouse_db, monkeypatch):
    # #27 item 11: the worker runs in its own temp directory, where a relative path named nothing.
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TRAJSCOPE_DB", raising=False)
    name = relative or "trajscope.duckdb"
    (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(warehouse_db, tmp_path / name)
    args = [*command, "--db", relative] if relative else list(command)
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    written = (tmp_path / "n.csv").read_text() if command[0] == "export" else result.output
    assert written.splitlines()[:2] == ["n", "10"]


@pytest.mark.parametrize("case", ["the warehouse", "a link to it", "a hard link to it", "its WAL", "a missing folder"])
@pytest.mark.parametrize("command", [["export-traces", "r1", "--format", "atif"], ["bundle", "--runs", "r1"]])
def test_trace_exports_and_bundles_never_write_over_the_warehouse(case, command, tmp_path, warehouse_db):
    db, before = _fresh_copy(tmp_path, warehouse_db)
    out, says = _out_cases(tmp_path, db)[case]
    result, errors = _write_out(command, out, db)
    assert result.exit_code == 1 and len(errors) == 1 and says in errors[0], result.output
    assert fingerprint(db) == before
