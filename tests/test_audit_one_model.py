"""One audit report model: `trajscope audit-report` and `trajscope report audit` print the causal and sentinel
tables from the same typed tables, through the same renderer, so they cannot disagree."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from fixtures.report.audit import build

from trajscope.analysis.report import FORMATS, ReportTable, audit_tables, build_report, to_frame
from trajscope.cli import main
from trajscope.warehouse import open_readonly
from trajscope.warehouse.audit import load_audit_records

# audit-report's name for a table -> the paper report's name for the same table.
SHARED = {"causal": "au_t1", "sentinels": "au_t2"}


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("audit-model") / "wh.duckdb"
    load_audit_records(path, build())
    return path


def test_the_shared_tables_are_the_same_objects_in_both_reports(db):
    with open_readonly(db) as con:
        panels = audit_tables(con, db_path=db)
        report = {t.name: t for t in build_report(con, "audit", [], db_path=db)}
    for panel, paper in SHARED.items():
        assert isinstance(panels[panel], ReportTable) and panels[panel].rows, panel
        assert panels[panel] == report[paper], panel
    # Every audit-report table is a typed table with numbers or a reason, never an untyped frame.
    assert all(isinstance(t, ReportTable) and (t.rows or t.not_applicable) for t in panels.values())


@pytest.mark.parametrize("fmt", FORMATS)
def test_both_commands_print_the_same_causal_and_sentinel_tables(db, fmt):
    runner = CliRunner()
    for panel, paper in SHARED.items():
        audit = runner.invoke(main, ["audit-report", "--db", str(db), "--format", fmt, "--table", panel])
        report = runner.invoke(main, ["report", "audit", "--db", str(db), "--format", fmt, "--table", paper])
        assert audit.exit_code == 0, audit.output
        assert report.exit_code == 0, report.output
        assert audit.output == report.output, (fmt, panel)
        assert "Does not apply" not in audit.output


def test_the_page_frame_carries_the_csv_columns_at_full_precision(db):
    with open_readonly(db) as con:
        causal = audit_tables(con, ["causal"], db_path=db)["causal"]
    df = to_frame(causal)
    assert df.columns == ["cell", "baseline", "n", "remove", "remove_low", "remove_high", "placebo", "placebo_low",
                          "placebo_high", "causal", "causal_low", "causal_high"]
    assert df["causal"].to_list() == [row[5].value for row in causal.rows]


def test_an_unknown_table_name_is_refused(db):
    with open_readonly(db) as con, pytest.raises(ValueError, match="unknown audit table"):
        audit_tables(con, ["causal", "nope"])
