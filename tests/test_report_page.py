"""The dashboard's Report page under Streamlit's AppTest: tables, SQL, downloads, "does not apply"."""

from __future__ import annotations

from pathlib import Path

import pytest
from fixtures.report.execution_rag import RUNS as ER_RUNS
from fixtures.report.execution_rag import build as build_er
from fixtures.report.execution_rag import run_id as er_run_id
from streamlit.testing.v1 import AppTest

from trajscope.analysis.report import build_report, format_cell
from trajscope.warehouse import ingest_trajectories, open_readonly

ROOT = Path(__file__).resolve().parents[1]
IDS = [er_run_id(*s[:4]) for s in ER_RUNS]


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("report-page") / "wh.duckdb"
    ingest_trajectories(path, build_er())
    return path


def _open(db, monkeypatch, **query):
    monkeypatch.setenv("TRAJSCOPE_DB", str(db))
    at = AppTest.from_file(str(ROOT / "app" / "page_scripts" / "report.py"), default_timeout=90)
    at.query_params.update(query)
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def test_report_page_shows_the_tables_the_cli_builds(db, monkeypatch):
    at = _open(db, monkeypatch, paper="execution-rag", runs=IDS)
    with open_readonly(db) as con:
        tables = build_report(con, "execution-rag", IDS, db_path=db)
    subheaders = [s.value for s in at.subheader]
    for table in tables:
        assert f"{table.title}. {table.caption}" in subheaders
    main = next(t for t in tables if t.name == "er_t1")
    shown = next(df.value for df in at.dataframe if list(df.value.columns) == [c.label for c in main.columns])
    assert shown.iloc[0].tolist() == [format_cell(v, c) for v, c in zip(main.rows[0], main.columns, strict=True)]
    assert any("FROM run_efficiency" in c.value for c in at.code)
    assert any(main.footnote == c.value for c in at.caption)


def test_report_page_says_when_a_table_does_not_apply(db, monkeypatch):
    at = _open(db, monkeypatch, paper="read-gate", runs=IDS[:2])
    infos = [i.value for i in at.info]
    assert any(
        i.startswith("Does not apply: no dataset has both a 'baseline' run and a gate run") for i in infos
    )


def test_navigation_lists_the_report_page(db, monkeypatch):
    monkeypatch.setenv("TRAJSCOPE_DB", str(db))
    at = AppTest.from_file(str(ROOT / "app" / "main.py"), default_timeout=60).run()
    at.switch_page("page_scripts/report.py").run()
    assert not at.exception and at.title[0].value == "Report"
