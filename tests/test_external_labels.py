"""Human labels on real logs (../shared/data/external_logs): Who&When and TRAIL import as one run each, and
every annotation lands on the step it names, checked against an independent reading of the raw files."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from trajscope.cli import main as cli
from trajscope.ingest.importers import TRAIL_CATEGORIES, normalise_trail_category
from trajscope.warehouse import open_readonly

LOGS = Path("../shared/data/external_logs")
WHO = LOGS / "who_and_when" / "algorithm_generated"
TRAIL = LOGS / "trail_swe"

pytestmark = pytest.mark.skipif(not LOGS.is_dir(), reason="real logs ../shared/data/external_logs are not present")


def raw_who() -> list[dict]:
    return [json.loads(p.read_text()) for p in WHO.glob("*.json")]


def _walk(span: dict):
    yield span
    for child in span.get("child_spans", []):
        yield from _walk(child)


def raw_trail() -> dict:
    traces = {}
    for path in TRAIL.glob("traces/*.json"):
        doc = json.loads(path.read_text())
        spans = [s for root in doc["spans"] for s in _walk(root)]
        errors = json.loads((TRAIL / "annotations" / path.name).read_text())["errors"]
        traces[doc["trace_id"]] = {"spans": spans, "errors": errors}
    return traces


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    db = tmp_path_factory.mktemp("labels") / "w.duckdb"
    result = CliRunner().invoke(cli, ["ingest", str(WHO), str(TRAIL / "traces"), "--labels",
                                      str(TRAIL / "annotations"), "--db", str(db)])
    assert result.exit_code == 0, result.output
    assert "38 label(s) on 5 trajectory(ies); 25 name no stored trajectory" in result.output
    return db


def test_who_and_when_is_one_run_with_a_label_at_each_annotated_history_entry(db):
    raw = raw_who()
    assert len(raw) == 126 and sum(len(r["history"]) for r in raw) == 1099
    with open_readonly(db) as con:
        runs = con.execute("SELECT run_id, count(*), sum(n_steps) FROM trajectories "
                           "WHERE run_id LIKE 'who_and_when:%' GROUP BY 1").fetchall()
        labels = con.execute(
            "SELECT t.question_id, h.step_index, h.source_ref, h.agent, h.reason, s.agent, s.raw "
            "FROM human_step_labels h "
            "JOIN trajectories t USING (trajectory_id) JOIN steps s USING (trajectory_id, step_index) "
            "WHERE h.source = 'who_and_when'").fetchall()
    assert runs == [("who_and_when:algorithm_generated", 126, 1099)]
    by_id = {r["question_ID"]: r for r in raw}
    assert len(labels) == 126 and {q for q, *_ in labels} == set(by_id)
    for qid, step, ref, agent, reason, speaker, text in labels:
        r = by_id[qid]
        assert step == int(r["mistake_step"]) and ref == f"history:{step}"
        assert (agent, reason) == (r["mistake_agent"], r["mistake_reason"])
        assert (speaker, text) == (r["history"][step]["name"], r["history"][step]["content"])
    assert sum(step == 0 for _, step, *_ in labels) == sum(r["mistake_step"] == "0" for r in raw) == 20
    same = sum(r["history"][int(r["mistake_step"])]["name"] == r["mistake_agent"] for r in raw)
    assert same == 123 == sum(agent == speaker for _, _, _, agent, _, speaker, _ in labels)


def test_trail_traces_import_with_every_annotated_span_resolved(db):
    raw = raw_trail()
    # 117 spans; one export lists one of them twice (118 entries walked)
    assert len(raw) == 6 and sum(len({s["span_id"] for s in t["spans"]}) for t in raw.values()) == 117
    assert sum(len(t["spans"]) for t in raw.values()) == 118
    assert sum(len(t["errors"]) for t in raw.values()) == 38
    with open_readonly(db) as con:
        runs = con.execute("SELECT run_id, count(*) FROM trajectories WHERE run_id LIKE 'trail:%' "
                           "GROUP BY 1").fetchall()
        labels = con.execute(
            "SELECT json_extract_string(t.metadata, '$.trace_id'), h.source_ref, s.source_ref, h.category_raw, "
            "h.category, h.impact, h.evidence FROM human_step_labels h JOIN trajectories t USING (trajectory_id) "
            "JOIN steps s USING (trajectory_id, step_index) WHERE h.source = 'trail'").fetchall()
        steps = dict(con.execute("SELECT json_extract_string(t.metadata, '$.trace_id'), count(s.step_index) "
                                 "FROM trajectories t JOIN steps s USING (trajectory_id) "
                                 "WHERE t.run_id LIKE 'trail:%' GROUP BY 1").fetchall())
    assert runs == [("trail:traces", 6)]
    # One step per distinct LLM and tool span (one LLM span is listed twice in its export).
    for trace, t in raw.items():
        kinds = {s["span_id"]: s["span_attributes"].get("openinference.span.kind") for s in t["spans"]}
        assert steps[trace] == sum(k in ("LLM", "TOOL") for k in kinds.values())
    expected = Counter((trace, "span:" + e["location"], e["category"], e["impact"], e["evidence"])
                       for trace, t in raw.items() for e in t["errors"])
    got = Counter((trace, ref, raw_cat, impact, evidence) for trace, ref, step_ref, raw_cat, _, impact, evidence
                  in labels)
    assert got == expected and len(labels) == 38
    assert all(ref == step_ref for _, ref, step_ref, *_ in labels)
    assert all(cat == SPELLINGS[raw_cat] for _, _, _, raw_cat, cat, _, _ in labels)


# Every spelling in the 31 TRAIL SWE-bench annotation files (256 errors), read by hand, and its label.
SPELLINGS = {
    "Context Handling Failures": "Context Handling Failures", "Formatting Error": "Formatting Errors",
    "Formatting Errors": "Formatting Errors", "Goal Deviation": "Goal Deviation",
    "Incorrect Memory Usage": "Incorrect Memory Usage",
    "Incorrect Problem Identification": "Incorrect Problem Identification",
    "Instruction Non-Compliance": "Instruction Non-compliance",
    "Instruction Non-compliance": "Instruction Non-compliance",
    "Instruction non complience": "Instruction Non-compliance", "Language-Only": "Language-only",
    "Language-only": "Language-only", "Poor Information Retrieval": "Poor Information Retrieval",
    "Poor Information retrieval": "Poor Information Retrieval", "Resource Abuse": "Resource Abuse",
    "Resource Exhaustion": "Resource Exhaustion", "Task Orchestration": "Task Orchestration",
    "Task Orchestration Error": "Task Orchestration", "Task Orchestration Errors": "Task Orchestration",
    "Tool Output Misinterpretation": "Tool Output Misinterpretation", "Tool-related": "Tool-related",
}


def test_every_trail_category_spelling_meets_its_label_of_the_21():
    raw = Counter(e["category"] for p in (TRAIL / "annotations").glob("*.json")
                  for e in json.loads(p.read_text())["errors"])
    assert sum(raw.values()) == 256 and set(raw) == set(SPELLINGS)
    assert {name: normalise_trail_category(name) for name in raw} == SPELLINGS
    assert len(TRAIL_CATEGORIES) == 21 and set(SPELLINGS.values()) <= set(TRAIL_CATEGORIES)
    assert normalise_trail_category("Sandwich Errors") is None


def test_labels_load_twice_adds_nothing_and_a_bad_reference_writes_nothing(db, tmp_path):
    runner = CliRunner()
    copy = tmp_path / "w.duckdb"
    copy.write_bytes(db.read_bytes())
    again = runner.invoke(cli, ["ingest", "--labels", str(TRAIL / "annotations"), "--db", str(copy)])
    assert again.exit_code == 0, again.output
    trace = next(iter(raw_trail()))
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"trace_id": trace, "source_ref": "span:nope", "category": "x"}) + "\n")
    refused = runner.invoke(cli, ["ingest", "--labels", str(TRAIL / "annotations"), "--labels", str(bad),
                                  "--db", str(copy)])
    assert refused.exit_code != 0 and "bad.jsonl:1" in refused.output and "has no step at span:nope" in refused.output
    with open_readonly(copy) as con:
        assert con.execute("SELECT count(*) FROM human_step_labels").fetchone()[0] == 126 + 38
