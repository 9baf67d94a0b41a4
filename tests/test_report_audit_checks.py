"""`trajscope report audit` prints the checks `audit-report` has (insertion, identity re-run, alias spot-check)."""
from __future__ import annotations

import pytest

from trajscope.analysis.report import audit_tables, build_report
from trajscope.warehouse import open_readonly
from trajscope.warehouse.audit import load_audit_records


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


def test_table_5_is_the_verification_modes_on_their_own(tmp_path):
    """AP App. §10: B4 (hard), B4s (soft) and B4lr (label-only) side by side, each with its paired lift over B1;
    the fixture's B4s answers every record with F1 1.0 and B4lr with 0.5."""
    import msgspec
    from fixtures.report.audit import build

    from trajscope.format import ReaderOutput

    records = []
    for r in build():
        extra = [ReaderOutput(baseline="b4s", answer="s", f1=1.0), ReaderOutput(baseline="b4lr", answer="l", f1=0.5)]
        records.append(msgspec.structs.replace(r, contexts={**r.contexts, "b4s": r.contexts["b4"],
                                                            "b4lr": r.contexts["b4"]},
                                               outputs=[*r.outputs, *extra]))
    path = tmp_path / "au.duckdb"
    load_audit_records(path, records)
    with open_readonly(path) as con:
        t5 = next(t for t in build_report(con, "audit", [], db_path=path) if t.name == "au_t5")
        n_analysable = con.execute("SELECT count(*) FROM audit_record_status WHERE analysable").fetchone()[0]
    assert n_analysable == len(records)  # so each mean below is over every fixture record of the cell
    assert t5.title == "Table 5" and [c.key for c in t5.columns][3:] == ["b4", "b4s", "b4lr"]
    for row in t5.rows:
        cell = row[0]
        mine = [r for r in records if r.cell == cell]
        b1 = [next(o.f1 for o in r.outputs if o.baseline == "b1" and o.intervention == "none") for r in mine]
        b4 = [next(o.f1 for o in r.outputs if o.baseline == "b4" and o.intervention == "none") for r in mine]
        assert row[3].value == pytest.approx(100 * sum(b4) / len(b4))
        assert row[4].value == pytest.approx(100.0) and row[5].value == pytest.approx(50.0)
        assert row[4].delta == pytest.approx(100 * sum(1.0 - f for f in b1) / len(b1))
