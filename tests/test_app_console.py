"""The SQL console refuses every write, file/network read and escape, and stops a slow query."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "app"))

from app_fixture_records import app_trajectories  # noqa: E402

from trajscope.app.console import ForbiddenStatement, QueryTimeout, check_statement, run_console_query  # noqa: E402
from trajscope.warehouse import ingest_trajectories  # noqa: E402


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("console") / "wh.duckdb"
    ingest_trajectories(path, app_trajectories())
    return path


@pytest.mark.parametrize("sql, says", [
    ("INSERT INTO runs (run_id) VALUES ('x')", "INSERT is not allowed"),
    ("UPDATE runs SET model = 'x'", "UPDATE is not allowed"),
    ("DELETE FROM runs", "DELETE is not allowed"),
    ("DROP TABLE runs", "DROP is not allowed"),
    ("CREATE TABLE t AS SELECT 1", "CREATE is not allowed"),
    ("CREATE OR REPLACE VIEW run_summary AS SELECT 1", "CREATE is not allowed"),
    ("COPY runs TO '/tmp/stolen.csv'", "COPY ... TO is not allowed"),
    ("COPY (SELECT * FROM runs) TO '/tmp/stolen.parquet' (FORMAT parquet)", "COPY ... TO is not allowed"),
    ("ATTACH '/tmp/other.duckdb' AS other", "ATTACH is not allowed"),
    ("INSTALL httpfs", "INSTALL is not allowed"),
    ("LOAD httpfs", "LOAD is not allowed"),
    ("SET enable_external_access = true", "SET is not allowed"),
    ("PRAGMA enable_profiling", "PRAGMA is not allowed"),
    ("EXPORT DATABASE '/tmp/dump'", "EXPORT is not allowed"),
    ("SELECT * FROM read_csv('/etc/passwd')", "read_csv() reads files"),
    ("SELECT * FROM read_text('/etc/hostname')", "read_text() reads files"),
    ("SELECT * FROM glob('/etc/*')", "glob() reads files"),
    ("select * from READ_PARQUET('https://example.com/x.parquet')", "read_parquet() reads files"),
    ("SELECT 1; DROP TABLE runs", "2 statements given"),
    ("UPDATE EXTENSIONS", "not allowed"),
    ("SELEC 1", "SQL syntax error"),
    ("   ", "empty"),
])
def test_forbidden_statements_are_refused_before_running(db, sql, says):
    with pytest.raises(ForbiddenStatement) as refused:
        run_console_query(db, sql, timeout_s=5, row_cap=10)
    assert says in str(refused.value)


def test_refused_writes_leave_the_warehouse_unchanged(db):
    for sql in ("DELETE FROM runs", "DROP TABLE runs"):
        with pytest.raises(ForbiddenStatement):
            run_console_query(db, sql, timeout_s=5, row_cap=10)
    result = run_console_query(db, "SELECT count(*) AS n FROM runs", timeout_s=5, row_cap=10)
    assert result.df["n"].to_list() == [3]


def test_a_file_path_in_from_is_refused_as_no_table_of_the_warehouse(db, tmp_path):
    # A replacement scan (a quoted path in FROM) is a table name in the parsed tree, not a function call.
    secret = tmp_path / "secret.csv"
    secret.write_text("a\n1\n")
    with pytest.raises(ForbiddenStatement, match="no table or view named"):
        run_console_query(db, f"SELECT * FROM '{secret}'", timeout_s=5, row_cap=10)


def test_a_deep_link_fills_the_editor_but_does_not_run(db, monkeypatch):
    from streamlit.testing.v1 import AppTest

    import trajscope.app.console._runner as runner

    calls = []
    monkeypatch.setattr(runner, "run_read_query", lambda *a, **k: calls.append(a) or (_ for _ in ()).throw(
        AssertionError("ran")))
    monkeypatch.setenv("TRAJSCOPE_DB", str(db))
    page = AppTest.from_file(str(Path(__file__).parents[1] / "app" / "page_scripts" / "sql_console.py"),
                             default_timeout=60)
    page.query_params["sql"] = "SELECT count(*) AS n FROM runs"
    page.run()
    assert not page.exception
    assert page.text_area(key="console-sql").value == "SELECT count(*) AS n FROM runs"
    assert calls == [] and "press Run query" in " ".join(i.value for i in page.info)


def test_an_interval_column_is_shown_as_text_not_a_traceback(db):
    result = run_console_query(db, "SELECT INTERVAL 1 DAY AS iv, 1::HUGEINT AS h, uuid() AS u, 'ab'::BLOB AS b, "
                               "'12:00:00+02'::TIMETZ AS tz, [INTERVAL 2 DAY] AS l, union_value(k := 1) AS un",
                               timeout_s=10, row_cap=10)
    assert result.df["iv"].to_list() == ["1 day"]
    assert set(result.as_text) == {"iv", "tz", "l", "un"}
    assert result.df["tz"].to_list() == ["12:00:00+02"]


def test_strings_and_comments_do_not_trigger_the_function_check():
    assert check_statement("SELECT 'read_csv(' AS x -- glob(\n;") == "SELECT 'read_csv(' AS x -- glob("


def test_a_query_past_the_time_limit_is_interrupted(db):
    with pytest.raises(QueryTimeout, match="time limit of 0.5 s"):
        run_console_query(db, "SELECT count(*) FROM range(1000000000) a, range(1000) b WHERE a.range % 7 = b.range",
                          timeout_s=0.5, row_cap=10)


def test_rows_are_capped_and_the_cap_is_reported(db):
    result = run_console_query(db, "SELECT * FROM steps ORDER BY trajectory_id, step_index",
                               timeout_s=5, row_cap=7)
    assert result.df.height == 7 and result.truncated
    whole = run_console_query(db, "SELECT count(*) AS n FROM steps", timeout_s=5, row_cap=7)
    assert not whole.truncated and whole.df["n"][0] == 33  # steps in app_fixture_records
