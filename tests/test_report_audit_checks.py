"""`trajscope report audit` prints the checks `audit-report` has (insertion, identity re-run, alias spot-check)."""
from __future__ import annotations

from trajscope.warehouse import open_readonly
from trajscope.warehouse.audit import load_audit_records
from trajscope.warehouse.report import audit_tables, build_report


def test_report_audit_carries_the_insertion_identity_and_alias_checks(tmp_path):
    from fixtures.report.audit import build

    path = tmp_path / "au.duckdb"
    load_audit_records(path, build())
    with open_readonly(path) as con:
        report = {t.name: t for t in build_report(con, "audit", [], db_path=path)}
        panels = audit_tables(con, ["insertion", "identity", "alias"], db_path=path)
    for key, name in (("insertion", "au_insertion"), ("identity", "au_identity"), ("alias", "au_alias")):
        assert name in report, name
        assert report[name].rows == panels[key].rows and report[name].not_applicable == panels[key].not_applicable
    # The fixture masks with [MASK] on every answer-bearing compile: the alias check has rows.
    masked = sum(1 for r in build() for o in r.outputs if o.sentinel == "[MASK]" and o.intervention == "remove")
    assert masked > 0 and report["au_alias"].not_applicable is None
