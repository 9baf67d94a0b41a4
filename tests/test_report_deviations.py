"""Deviations are data: docs/definitions.md's table and trajscope/analysis/report/deviations.json hold the same entries,
and every built report table carries the note of each deviation the docs say touches it."""
from __future__ import annotations

import json
import re
from fnmatch import fnmatch
from pathlib import Path

import pytest

from trajscope.analysis.report import DEVIATIONS, build_report
from trajscope.warehouse import ingest_trajectories, open_readonly
from trajscope.warehouse.audit import load_audit_records

ROOT = Path(__file__).resolve().parents[1]


def _docs_rows() -> dict[str, dict]:
    """The deviations table of docs/definitions.md, parsed from the Markdown itself."""
    section = (ROOT / "docs" / "definitions.md").read_text().split("## Deviations, printed under", 1)[1]
    rows = {}
    for line in section.splitlines():
        m = re.match(r"^\| `([a-z0-9_]+)` \| (.+?) \| (.+?) \| (.+?) \| (.+) \|$", line)
        if m:
            rows[m[1]] = {"section": m[2], "deviation": m[3], "reason": m[4],
                          "tables": tuple(re.findall(r"`([^`]+)`", m[5]))}
    return rows


def test_the_docs_table_and_the_data_file_hold_the_same_deviations():
    docs = _docs_rows()
    data = json.loads((ROOT / "trajscope" / "analysis" / "report" / "deviations.json").read_text())
    assert set(docs) == {e["key"] for e in data}
    for e in data:
        row = docs[e["key"]]
        assert row["section"] == e["section"] and row["reason"] == e["reason"]
        assert row["tables"] == tuple(e["tables"])
        assert e["note"] == f"Deviation ({e['key']}): {row['deviation']}"
    assert [d.key for d in DEVIATIONS] == [e["key"] for e in data]  # the report reads the same file
    # The deviations the docs' own sections state, each an entry of the one list.
    assert {"forced_answers_classified", "regex_entity_extractor", "judge_strata_within_run", "erag_prompt_wording",
            "answer_from_register", "audit_f1_squad", "tokens_by_characters", "hedge_with_explanation"} <= set(docs)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    from fixtures.report import audit, execution_rag, read_gate

    root = tmp_path_factory.mktemp("deviations")
    tables = {}
    rg, er, au = root / "rg.duckdb", root / "er.duckdb", root / "au.duckdb"
    ingest_trajectories(rg, read_gate.build().records)
    ingest_trajectories(er, execution_rag.build())
    load_audit_records(au, audit.build())
    with open_readonly(rg) as con:
        ids = [read_gate.run_id(*s[:4]) for s in read_gate.RUNS]
        tables.update({t.name: t for t in build_report(con, "read-gate", ids, db_path=rg, sweep="reasoning_effort")})
    with open_readonly(er) as con:
        ids = [execution_rag.run_id(*s[:4]) for s in execution_rag.RUNS]
        tables.update({t.name: t for t in build_report(con, "execution-rag", ids, db_path=er)})
    with open_readonly(au) as con:
        tables.update({t.name: t for t in build_report(con, "audit", [], db_path=au)})
    return tables


def test_every_table_carries_each_deviation_the_docs_say_touches_it(built):
    docs = _docs_rows()
    notes = {e.key: e.note for e in DEVIATIONS}
    touched = 0
    for name, table in built.items():
        for key, row in docs.items():
            if any(fnmatch(name, pattern) for pattern in row["tables"]):
                assert notes[key] in table.notes, (name, key)
                touched += 1
    assert touched > len(docs)
    # Independently of any pattern: what the papers' tables rest on.
    expected = {
        "rg_t3": {"forced_answers_classified", "regex_entity_extractor", "bootstrap_multinomial"},
        "rg_plane": {"forced_answers_classified", "regex_entity_extractor"},
        "rg_t18": {"judge_strata_within_run"},
        "er_t1": {"erag_prompt_wording", "answer_from_register"},
        "er_t12": {"erag_prompt_wording", "gave_up_at_budget"},
        "au_t3": {"audit_f1_squad"},
        "au_t1": {"audit_f1_squad", "bootstrap_multinomial"},
    }
    for name, keys in expected.items():
        for key in keys:
            assert notes[key] in built[name].notes, (name, key)
    assert notes["judge_strata_within_run"] not in built["rg_t3"].notes
    assert notes["audit_f1_squad"] not in built["au_blind"].notes  # containment, no reader F1
