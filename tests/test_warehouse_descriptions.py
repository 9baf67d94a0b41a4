"""Load-time SQL lives in warehouse/load/*.sql and inserts by name;
descriptions are stored in the warehouse and shown by `trajscope views`."""
from __future__ import annotations

import re
from pathlib import Path

import duckdb
from click.testing import CliRunner
from foundation_records import fixture_trajectories

from trajscope.cli import main as cli
from trajscope.warehouse import ingest_trajectories, load_views, open_readonly, upgrade_if_warehouse

ROOT = Path(__file__).resolve().parents[1]

# Bookkeeping tables of warehouse/_schema.py, not data: which migrations ran and the hash of the
# installed views. (The loader's stage_* tables are TEMP, per connection, and never in the catalog.)
UNDESCRIBED = {"schema_migrations": "migration bookkeeping", "views_state": "installed-views hash"}


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


def test_every_column_of_every_table_and_view_has_a_description(tmp_path):
    db = tmp_path / "w.duckdb"
    ingest_trajectories(db, fixture_trajectories())
    with open_readonly(db) as con:
        relations = con.execute(
            "SELECT view_name, 'view', comment FROM duckdb_views() WHERE NOT internal "
            "UNION ALL SELECT table_name, 'table', comment FROM duckdb_tables() WHERE NOT internal").fetchall()
        columns = con.execute(
            "SELECT table_name, column_name, comment FROM duckdb_columns() WHERE NOT internal "
            "ORDER BY table_name, column_index").fetchall()
    names = {name for name, _, _ in relations}
    assert set(UNDESCRIBED) <= names and {v.name for v in load_views()} <= names
    undescribed = [f"{kind} {name}" for name, kind, comment in relations
                   if name not in UNDESCRIBED and not (comment or "").strip()]
    undescribed += [f"{table}.{column}" for table, column, comment in columns
                    if table not in UNDESCRIBED and not (comment or "").strip()]
    assert not undescribed, (
        "no description (COMMENT ON; a table column in a new migration, a view column at the end of its "
        "warehouse/views file): " + ", ".join(undescribed))
    described = [c for t, _, c in columns if t not in UNDESCRIBED]
    assert len(described) > 600
    assert all("\n" not in c for c in described), "a description is one line"


def test_an_older_warehouse_is_given_the_column_descriptions(tmp_path):
    db = tmp_path / "w.duckdb"
    ingest_trajectories(db, fixture_trajectories())
    with duckdb.connect(str(db)) as con:
        # The warehouse before migration 0008: its table columns had no description.
        con.execute("COMMENT ON COLUMN runs.model IS NULL")
        con.execute("COMMENT ON COLUMN audit_outputs.f1 IS NULL")
        con.execute("DELETE FROM schema_migrations WHERE version >= 8")
    assert upgrade_if_warehouse(db) == "upgraded"
    with open_readonly(db) as con:
        stored = dict(con.execute(
            "SELECT table_name || '.' || column_name, comment FROM duckdb_columns() "
            "WHERE (table_name, column_name) IN (('runs', 'model'), ('audit_outputs', 'f1'))").fetchall())
    assert stored["runs.model"].startswith("Agent model name")
    assert stored["audit_outputs.f1"].startswith("Token F1 of the answer against the original gold")


def test_views_command_prints_the_descriptions_of_a_taxonomy_and_an_audit_view(tmp_path):
    db = tmp_path / "w.duckdb"
    ingest_trajectories(db, fixture_trajectories())
    runner = CliRunner()
    plane = runner.invoke(cli, ["views", "failure_plane", "--db", str(db)])
    assert plane.exit_code == 0, plane.output
    assert re.search(r"n_judged\s+BIGINT\s+Trajectories with a verdict \(correct not NULL\): the denominator of p_disc",
                     plane.output)
    assert re.search(r"n_disc\s+\S+\s+.*NULL without a read action or with no verdict in the run \(see p_disc_reason\)",
                     plane.output)
    causal = runner.invoke(cli, ["views", "audit_causal_pairs", "--db", str(db)])
    assert causal.exit_code == 0, causal.output
    assert re.search(r"delta_causal\s+DOUBLE\s+delta_remove - delta_placebo", causal.output)
    # Every column line of the two views carries a description after its type.
    for output in (plane.output, causal.output):
        rows = [line.split() for line in output.splitlines()[1:]]
        assert rows and all(len(r) >= 3 for r in rows), output
