"""The Overview page under Streamlit's AppTest: its numbers against counts taken from the records themselves."""
from __future__ import annotations

import sys
from pathlib import Path
from urllib.parse import parse_qsl

import pytest
from streamlit.testing.v1 import AppTest

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "app"))

from app_fixture_records import app_trajectories  # noqa: E402

from trajscope.format import GateRejectionStep  # noqa: E402
from trajscope.warehouse import ingest_trajectories, open_readonly  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
AUDIT_FIXTURE = ROOT / "tests" / "fixtures" / "audit" / "external_records.jsonl"


@pytest.fixture(scope="module")
def warehouse_file(tmp_path_factory) -> Path:
    from trajscope.warehouse.audit import load_audit_files

    db = tmp_path_factory.mktemp("overview") / "wh.duckdb"
    ingest_trajectories(db, app_trajectories())
    load_audit_files(db, [AUDIT_FIXTURE])
    return db


def open_overview(db: Path, monkeypatch) -> AppTest:
    # Through main.py: the Overview is its default page, and its links need the registered pages.
    monkeypatch.setenv("TRAJSCOPE_DB", str(db))
    at = AppTest.from_file(str(ROOT / "app" / "main.py"), default_timeout=60).run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def _links(at: AppTest) -> list[tuple[str, str, dict]]:
    # AppTest has no page_link accessor: read the protos of the page's elements.
    return [(n.proto.page, n.proto.label, dict(parse_qsl(n.proto.query_string))) for n in at.get("page_link")]


def test_overview_counts_come_from_the_records(warehouse_file, monkeypatch):
    records = app_trajectories()
    at = open_overview(warehouse_file, monkeypatch)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Runs"] == str(len({t.run.run_id for t in records}))
    assert metrics["Trajectories"] == str(len(records))
    assert metrics["Questions"] == str(len({(t.run.dataset, t.question.question_id) for t in records}))
    with open_readonly(warehouse_file) as con:
        n_audit = con.execute("SELECT count(*) FROM audit_records").fetchone()[0]
    assert n_audit > 0 and metrics["Audit records"] == str(n_audit)


def test_overview_links_the_gate_rejection_to_its_replay(warehouse_file, monkeypatch):
    records = app_trajectories()
    rejected = {t.trajectory_id: sum(isinstance(s, GateRejectionStep) for s in t.steps) for t in records}
    rejected = {k: v for k, v in rejected.items() if v}
    assert rejected, "the fixture must hold a gate rejection for this test to mean anything"
    at = open_overview(warehouse_file, monkeypatch)
    replay = [(label, query) for page, label, query in _links(at) if page.endswith("replay")]
    assert len(replay) == len({k.split("::")[0] for k in rejected})
    label, query = replay[0]
    assert f"rejected {sum(rejected.values())} final(s) in {len(rejected)} trajectories" in label
    assert query["trajectory"] == min(rejected)


def test_overview_links_the_paired_test_and_the_audit(warehouse_file, monkeypatch):
    at = open_overview(warehouse_file, monkeypatch)
    links = _links(at)
    compare = [(label, query) for page, label, query in links if page.endswith("compare")]
    assert compare and compare[0][1] == {"a": "run_base", "b": "run_gate"}
    runs = {t.run.run_id: t.run for t in app_trajectories()}
    base, gate = (f"{r.dataset} · {r.controller}/{r.condition} · {r.model}"
                  for r in (runs["run_base"], runs["run_gate"]))
    assert f"McNemar for {base} vs {gate} on 4 paired questions" in compare[0][0]
    assert any(page.endswith("audit") for page, _, _ in links)
