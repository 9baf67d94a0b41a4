"""Load-time SQL lives in warehouse/load/*.sql and inserts by name;
descriptions are stored in the warehouse and shown by `trajscope views`."""
from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner
from foundation_records import fixture_trajectories

from trajscope.cli import main as cli
from warehouse import ingest_trajectories, load_views, open_readonly

ROOT = Path(__file__).resolve().parents[1]


def test_every_load_statement_is_a_described_sql_file_that_inserts_by_name():
    files = sorted((ROOT / "warehouse" / "load").glob("*.sql"))
    assert len(files) >= 15
    for path in files:
        text = path.read_text()
        assert text.startswith("-- ") and len(text.splitlines()[0]) > 10, path.name
        for insert in re.findall(r"INSERT\s+INTO\s+\w+\s*\S*\s*\S*", text, re.I):
            assert re.match(r"INSERT\s+INTO\s+\w+\s+BY\s+NAME\b", insert, re.I), f"{path.name}: {insert} is positional"
    loader = (ROOT / "warehouse" / "_loader.py").read_text()
    assert "INSERT INTO" not in loader.replace("INSERT INTO {table} BY NAME", "")


def test_views_and_columns_carry_their_descriptions_in_the_warehouse(tmp_path):
    db = tmp_path / "w.duckdb"
    ingest_trajectories(db, fixture_trajectories())
    with open_readonly(db) as con:
        stored = dict(con.execute("SELECT view_name, comment FROM duckdb_views() WHERE NOT internal").fetchall())
        columns = dict(con.execute(
            "SELECT column_name, comment FROM duckdb_columns() WHERE table_name = 'trajectories'").fetchall())
        plane = dict(con.execute(
            "SELECT column_name, comment FROM duckdb_columns() WHERE table_name = 'failure_plane'").fetchall())
    assert {v.name: v.description for v in load_views()} == stored
    assert columns["read_count"].startswith("Read steps that returned a passage")
    assert "NULL without a read action" in plane["p_disc"]


def test_views_command_shows_a_views_columns_from_the_warehouse_or_without_one(tmp_path):
    runner = CliRunner()
    bare = runner.invoke(cli, ["views", "run_capabilities"])
    assert bare.exit_code == 0, bare.output
    assert bare.output.startswith("run_capabilities: Per run, what its log can be measured on")
    assert re.search(r"read_action\s+BOOLEAN\s+A read opens a full passage", bare.output)
    db = tmp_path / "w.duckdb"
    ingest_trajectories(db, fixture_trajectories())
    table = runner.invoke(cli, ["views", "trajectories", "--db", str(db)])
    assert table.exit_code == 0
    assert re.search(r"failed_read_count\s+INTEGER\s+Read steps that returned no", table.output)
    listed = runner.invoke(cli, ["views", "--db", str(db)])
    assert listed.exit_code == 0 and "failure_plane" in listed.output
    missing = runner.invoke(cli, ["views", "no_such_view"])
    assert missing.exit_code != 0 and "no view or table 'no_such_view'" in missing.output
    (tmp_path / "junk.duckdb").write_text("not a database")
    junk = runner.invoke(cli, ["views", "runs", "--db", str(tmp_path / "junk.duckdb")])
    assert junk.exit_code != 0 and "not a trajscope warehouse" in junk.output and "Traceback" not in junk.output
