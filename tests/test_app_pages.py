"""Every dashboard page under Streamlit's AppTest on a hand-made warehouse, asserting what it shows."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "app"))

from app_fixture_records import app_trajectories, upload_trajectories, vanilla_rag_trajectories  # noqa: E402

from trajscope.format import (
    FinalStep,  # noqa: E402
    encode,  # noqa: E402
)
from trajscope.warehouse import ingest_trajectories, open_readonly  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
AUDIT_FIXTURE = ROOT / "tests" / "fixtures" / "audit" / "external_records.jsonl"


@pytest.fixture(scope="module")
def warehouse_file(tmp_path_factory) -> Path:
    from trajscope.warehouse.audit import load_audit_files

    db = tmp_path_factory.mktemp("app") / "wh.duckdb"
    ingest_trajectories(db, app_trajectories())
    load_audit_files(db, [AUDIT_FIXTURE])
    return db


@pytest.fixture(scope="module")
def no_read_warehouse(tmp_path_factory) -> Path:
    """The app fixture plus run_vanilla, whose controller has no read action (passages put in the prompt)."""
    db = tmp_path_factory.mktemp("app-no-read") / "wh.duckdb"
    ingest_trajectories(db, app_trajectories() + vanilla_rag_trajectories())
    return db


def open_page(db: Path, script: str | None, monkeypatch, **query: str | list[str]) -> AppTest:
    """A page opened the way a copied link opens it: its URL parameters present from the first run."""
    monkeypatch.setenv("TRAJSCOPE_DB", str(db))
    at = AppTest.from_file(str(ROOT / "app" / "page_scripts" / f"{script or 'runs'}.py"), default_timeout=60)
    at.query_params.update(query)
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def test_navigation_registers_every_page_and_opens_the_overview(warehouse_file, monkeypatch):
    monkeypatch.setenv("TRAJSCOPE_DB", str(warehouse_file))
    at = AppTest.from_file(str(ROOT / "app" / "main.py"), default_timeout=60).run()
    assert not at.exception and at.title[0].value == "Overview"
    for script, title in (("runs", "Runs"), ("replay", "Trajectory replay"), ("sql_console", "SQL console")):
        at.switch_page(f"page_scripts/{script}.py").run()
        assert not at.exception and at.title[0].value == title


def frame(at: AppTest, *columns: str):
    """The first dataframe shown that has all these columns, as pandas."""
    for df in at.dataframe:
        if set(columns) <= set(df.value.columns):
            return df.value
    raise AssertionError(f"no dataframe with columns {columns}")


def test_runs_lists_every_run_with_accuracy_and_cost(warehouse_file, monkeypatch):
    at = open_page(warehouse_file, None, monkeypatch)
    runs = at.dataframe[0].value.set_index("run_id")
    assert sorted(runs.index) == ["run_base", "run_gate", "run_other"]
    assert runs["em"].to_dict() == {"run_base": 0.5, "run_gate": 0.75, "run_other": 0.0}
    assert runs["n_trajectories"].to_dict() == {"run_base": 4, "run_gate": 4, "run_other": 2}
    assert runs["cost_usd"].round(6).to_dict() == {"run_base": 0.04, "run_gate": 0.04, "run_other": 0.02}
    assert runs.loc["run_base", "zero_read_final_rate"] == 0.25
    assert any("FROM run_summary" in c.value for c in at.code)


def test_runs_filters_and_selected_run_come_from_the_url(warehouse_file, monkeypatch):
    at = open_page(warehouse_file, None, monkeypatch, dataset="fx", run="run_base")
    assert sorted(at.dataframe[0].value["run_id"]) == ["run_base", "run_gate"]
    assert at.multiselect(key="runs-filter-dataset").value == ["fx"]
    trajectories = frame(at, "replay", "question_id")
    assert list(trajectories["question_id"]) == ["q1", "q2", "q3", "q4"]
    assert list(trajectories["em"]) == [1.0, 0.0, 0.0, 1.0]
    assert trajectories["replay"][0] == "./replay?trajectory=run_base%3A%3Aq1"
    assert at.query_params["run"] == "run_base" and at.query_params["dataset"] == "fx"


def test_a_missing_warehouse_explains_how_to_fill_it(tmp_path, monkeypatch):
    for script in (None, "failure_plane", "replay", "sql_console", "export", "compare", "audit"):
        at = open_page(tmp_path / "none.duckdb", script, monkeypatch)
        assert not at.error
        assert any("does not exist yet" in i.value for i in at.info), script
    assert not (tmp_path / "none.duckdb").exists()


def test_failure_plane_shows_p_disc_p_post_and_a_runs_failures(warehouse_file, monkeypatch):
    at = open_page(warehouse_file, "failure_plane", monkeypatch, run="run_base")
    plane = at.dataframe[0].value.set_index("run_id")
    assert plane["p_disc"].to_dict() == {"run_base": 0.25, "run_gate": 0.0, "run_other": 1.0}
    assert plane["p_post"].to_dict() == {"run_base": 0.25, "run_gate": 0.0, "run_other": 0.0}
    pooled = at.dataframe[1].value.set_index("extractor")
    assert "κ discipline indicator: regex vs spaCy" in [m.label for m in at.metric]
    assert pooled.loc["regex", "n_runs"] == 3
    failures = at.dataframe[2].value
    labels = dict(zip(failures["question_id"], failures["label"], strict=False))
    assert labels == {"q2": "discipline", "q3": "post_gold_read"}
    assert failures.set_index("question_id").loc["q2", "discipline_subtype"] == "no_read_final"
    assert len(at.get("vega_lite_chart")) == 2  # one plane per dataset


def test_failure_plane_leaves_runs_without_a_read_action_off_the_discipline_axis(no_read_warehouse, monkeypatch):
    at = open_page(no_read_warehouse, "failure_plane", monkeypatch)
    plane = frame(at, "p_disc", "p_post", "p_disc_reason").set_index("run_id")
    assert plane.loc["run_vanilla", "p_post"] == 0.5  # its wrong answer had the gold in the prompt
    assert plane["p_disc"].isna()["run_vanilla"]
    assert plane.loc["run_base", "p_disc"] == 0.25
    with open_readonly(no_read_warehouse) as con:
        (reason,), = con.execute("SELECT DISTINCT p_disc_reason FROM failure_plane WHERE run_id = 'run_vanilla'"
                                 ).fetchall()
    assert reason.startswith("no read action in this log")
    # Listed by name (dataset · controller/condition · model of the fixture's runs), the id in the line's help.
    listed = {c.value: c.proto.help for c in at.caption if " — " in c.value}
    assert "run_vanilla" in listed[f"fx · vanilla_rag/k5 · m1 — {reason}"]
    assert not any(line.startswith("fx · react/baseline · m1 —") for line in listed)  # plotted runs are not listed
    # Not plotted as a zero: the chart's data holds the plotted runs only.
    specs = " ".join(str(chart.proto) for chart in at.get("vega_lite_chart"))
    assert "run_base" in specs and "run_vanilla" not in specs


def test_runs_show_each_runs_capability_profile_with_its_reasons(no_read_warehouse, monkeypatch):
    at = open_page(no_read_warehouse, None, monkeypatch)
    profile = frame(at, "read_action", "gold_passages", "profile_source").set_index("run_id")
    assert profile.loc["run_vanilla", "read_action"] == "no"
    assert profile.loc["run_base", "read_action"] == "yes"
    assert set(profile.loc["run_vanilla", ["gold_answers", "gold_passages"]]) == {"yes"}
    reasons = frame(at, "read_action_reason").set_index("run_id")
    with open_readonly(no_read_warehouse) as con:
        (stored,), = con.execute("SELECT read_action_reason FROM run_capabilities WHERE run_id = 'run_vanilla'"
                                 ).fetchall()
    assert "no read action" in stored and reasons.loc["run_vanilla", "read_action_reason"] == stored


def test_a_declared_capability_is_marked_as_declared():
    import duckdb

    from trajscope.app.queries import run_capabilities_sql

    con = duckdb.connect()
    con.execute("CREATE TABLE run_capabilities AS SELECT 'r' AS run_id, true AS search_candidates, "
                "NULL::BOOLEAN AS snippets, false AS read_action, true AS gold_answers, true AS gold_passages, "
                "false AS judgments, ['read_action'] AS declared, 'recorded' AS profile_source, "
                + ", ".join(f"'why {c}' AS {c}_reason" for c in ("search_candidates", "snippets", "read_action",
                                                                "gold_answers", "gold_passages", "judgments")))
    row = con.sql(run_capabilities_sql(["r"])).pl().row(0, named=True)
    assert row["read_action"] == "no (declared)" and row["snippets"] == "unknown"
    assert row["search_candidates"] == "yes" and row["read_action_reason"] == "why read_action"


def test_sql_console_sidebar_describes_views_tables_and_columns(no_read_warehouse, monkeypatch):
    at = open_page(no_read_warehouse, "sql_console", monkeypatch, relation="run_capabilities")
    with open_readonly(no_read_warehouse) as con:
        (view_comment,), = con.execute(
            "SELECT comment FROM duckdb_views() WHERE view_name = 'run_capabilities'").fetchall()
        (table_comment,), = con.execute("SELECT comment FROM duckdb_tables() WHERE table_name = 'runs'").fetchall()
        (column_type, column_comment), = con.execute(
            "SELECT data_type, comment FROM duckdb_columns() "
            "WHERE table_name = 'run_capabilities' AND column_name = 'read_action'").fetchall()
    assert view_comment and table_comment and column_comment  # the warehouse stores them
    relations = frame(at, "name", "kind", "description").set_index("name")
    assert relations.loc["run_capabilities", "description"] == view_comment
    assert relations.loc["runs", "kind"] == "table" and relations.loc["runs", "description"] == table_comment
    assert any(view_comment in m.value for m in at.sidebar.markdown)
    columns = frame(at, "column", "type", "description").set_index("column")
    assert columns.loc["read_action", "type"] == column_type == "BOOLEAN"
    assert columns.loc["read_action", "description"] == column_comment


def test_breakdowns_show_recall_and_accuracy_by_hop(warehouse_file, monkeypatch):
    at = open_page(warehouse_file, "breakdowns", monkeypatch, run="run_base")
    hops = at.dataframe[0].value.set_index("hop_count")
    assert hops["n"].to_dict() == {2: 3, 3: 1}
    assert hops.loc[2, "accuracy"] == pytest.approx(1 / 3)
    # hop 2: q1 reached both golds, q2 and q3 one of two; hop 3: q4 one of three
    assert hops.loc[2, "hop_evidence_recall"] == pytest.approx((1 + 0.5 + 0.5) / 3)
    assert hops.loc[3, "hop_evidence_recall"] == pytest.approx(1 / 3)
    assert hops.loc[2, "n_failures"] == 2
    types = at.dataframe[1].value.set_index("question_type")
    assert types.loc["bridge", "zero_read_final_rate"] == 0.5
    assert len(at.get("vega_lite_chart")) == 4


def test_replay_from_a_deep_link_shows_steps_gate_rejection_and_verdicts(warehouse_file, monkeypatch):
    at = open_page(warehouse_file, "replay", monkeypatch, trajectory="run_gate::q2")
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["EM"] == "1.00" and metrics["Reads"] == "1" and metrics["Turns"] == "4"
    assert [w.value for w in at.warning] == [
        "Rejected answer **Dan** by `read_gate`: no read before final"]
    assert any(i.value == "2 turns left" for i in at.info)
    markdown = " ".join(m.value for m in at.markdown)
    assert "injected `g2b`" in markdown and ":orange-badge[gold]" in markdown
    judgments = [d.value for d in at.dataframe if "judge" in d.value.columns][0]
    assert sorted(judgments["judge"]) == ["contain", "em", "f1", "llm"]


def test_replay_shows_taxonomy_labels_and_side_by_side(warehouse_file, monkeypatch):
    at = open_page(warehouse_file, "replay", monkeypatch, trajectory="run_base::q3", vs="run_gate::q3")
    labels = [d.value for d in at.dataframe if "taxonomy" in d.value.columns][0]
    assert dict(zip(labels["taxonomy"], labels["label"], strict=False))["read_gate:regex"] == "post_gold_read"
    assert at.selectbox(key="replay-vs").value == "run_gate::q3"
    assert len(at.columns) >= 2 and at.query_params["vs"] == "run_gate::q3"


def test_replay_marks_steps_served_from_the_response_cache(tmp_path, monkeypatch):
    from foundation_records import fixture_trajectories  # run_a::q3 was served from the cache

    db = tmp_path / "wh.duckdb"
    ingest_trajectories(db, fixture_trajectories())
    cached = open_page(db, "replay", monkeypatch, trajectory="run_a::q3")
    notes = [c.value for c in cached.caption if "response from the cache" in c.value]
    assert len(notes) == 4  # search, read, re-read, forced answer
    fresh = open_page(db, "replay", monkeypatch, trajectory="run_a::q1")
    assert not [c.value for c in fresh.caption if "response from the cache" in c.value]


def test_replay_of_an_unknown_id_says_so(warehouse_file, monkeypatch):
    at = open_page(warehouse_file, "replay", monkeypatch, trajectory="nope::q9")
    assert any("No trajectory `nope::q9`" in w.value for w in at.warning)


def test_compare_explains_an_undefined_stratified_odds_ratio(tmp_path, monkeypatch):
    from app_fixture_records import _read, _run, _search, _traj

    a, b = _run("deg_a", "fx", "baseline"), _run("deg_b", "fx", "read_gate")
    db = tmp_path / "wh.duckdb"
    ingest_trajectories(db, [
        # A reads one passage, never a gold one; B reads two, a gold among them: no shared stratum.
        _traj(a, "q1", [_search("Ann", "x1"), _read("x1"), FinalStep(answer="Rome")], "Rome", False),
        _traj(a, "q3", [_search("rivers", "x3"), _read("x3"), FinalStep(answer="Po")], "Po", False),
        _traj(b, "q1", [_search("Ann", "g1a", "x1"), _read("g1a", "x1"), FinalStep(answer="Lyon")], "Lyon", False),
        _traj(b, "q3", [_search("rivers", "g3a", "x3"), _read("g3a", "x3"), FinalStep(answer="Po")], "Po", False),
    ])
    at = open_page(db, "compare", monkeypatch, a="deg_a", b="deg_b")
    assert any("Undefined here" in c.value for c in at.caption)
    strata = frame(at, "passages_read", "post_gold_read")
    assert strata.to_dict("records") == [
        {"passages_read": 1, "run": "deg_b", "post_gold_read": 0, "other": 0},
        {"passages_read": 1, "run": "deg_a", "post_gold_read": 0, "other": 2},
        {"passages_read": 2, "run": "deg_b", "post_gold_read": 2, "other": 0},
        {"passages_read": 2, "run": "deg_a", "post_gold_read": 0, "other": 0},
    ]
    assert not [m for m in at.metric if m.label == "Mantel-Haenszel OR"]


def test_compare_shows_paired_statistics_and_transition_questions(warehouse_file, monkeypatch):
    at = open_page(warehouse_file, "compare", monkeypatch, a="run_base", b="run_gate")
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Paired questions"] == "4"
    assert metrics["A · correct"] == "50.0%" and metrics["B · correct"] == "75.0%"
    transitions = frame(at, "B right")
    assert transitions["B right"].tolist() == [2, 1] and transitions["B wrong"].tolist() == [0, 1]
    fixed = frame(at, "side_by_side")
    assert fixed["question_id"].tolist() == ["q2"]
    assert fixed["side_by_side"][0] == "./replay?trajectory=run_base%3A%3Aq2&vs=run_gate%3A%3Aq2"


def test_sql_console_runs_a_query_from_the_url_on_run_and_refuses_writes(warehouse_file, monkeypatch):
    at = open_page(warehouse_file, "sql_console", monkeypatch, sql="SELECT count(*) AS n FROM trajectories")
    assert not at.dataframe or all("n" not in df.value.columns for df in at.dataframe)  # not run on load
    at.button[0].click().run()
    assert frame(at, "n")["n"].tolist() == [10]
    at = open_page(warehouse_file, "sql_console", monkeypatch, sql="DELETE FROM trajectories")
    at.button[0].click().run()
    assert any("Refused: DELETE is not allowed" in e.value for e in at.error)


def test_export_previews_a_view_and_offers_every_format(warehouse_file, monkeypatch):
    at = open_page(warehouse_file, "export", monkeypatch, source="run_summary", where="dataset = 'fx'")
    at.button(key="export-run").click().run()  # a linked filter runs only on Run
    assert sorted(frame(at, "run_id", "em")["run_id"]) == ["run_base", "run_gate"]
    assert {r.label for r in at.radio} >= {"Table format"}
    assert at.radio(key="export-format").options == ["CSV", "Parquet", "LaTeX (booktabs)", "Markdown"]
    assert at.selectbox(key="export-y").value == "em"  # a measure, not the last numeric column
    at = open_page(warehouse_file, "export", monkeypatch, source="runs", where="1=1; DROP TABLE runs")
    at.button(key="export-run").click().run()
    assert any("Refused" in e.value for e in at.error)


def test_audit_page_shows_the_report_tables(warehouse_file, monkeypatch):
    from trajscope.analysis.report import audit_tables, to_frame

    at = open_page(warehouse_file, "audit", monkeypatch)
    with open_readonly(warehouse_file) as con:
        expected = audit_tables(con, db_path=warehouse_file)
    assert [s.value for s in at.subheader] == [f"{t.title}. {t.caption}" for t in expected.values()]
    causal = frame(at, "causal_low")
    want = to_frame(expected["causal"])
    assert want.height > 0
    assert causal["causal"].tolist() == pytest.approx(want["causal"].to_list())


def test_upload_validates_before_writing_then_ingests(tmp_path, monkeypatch):
    db = tmp_path / "new.duckdb"
    good = b"\n".join(encode(t) for t in upload_trajectories()) + b"\n"
    bad = good + b'{"trajectory_id": "x", "run": {"run_id": 5}, "question": {"question_id": "q", "text": "t"}}\n'
    at = open_page(db, "upload", monkeypatch)
    at.file_uploader(key="upload-file").set_value(("bad.jsonl", bad, "application/jsonl")).run()
    errors = frame(at, "file", "line", "field", "message")
    assert errors.to_dict("records") == [
        {"file": "bad.jsonl", "line": 3, "field": "run.run_id", "message": "Expected `str`, got `int`"}]
    assert not db.exists()
    assert not [b for b in at.button if b.label == "Ingest into the warehouse"]
    at.file_uploader(key="upload-file").set_value(("good.jsonl", good, "application/jsonl")).run()
    assert {m.label: m.value for m in at.metric} == {"Format": "canonical", "Valid records": "2", "Errors": "0"}
    assert frame(at, "trajectory_id", "steps")["trajectory_id"].tolist() == ["run_upload::q1", "run_upload::q3"]
    at.button(key="upload-ingest").click().run()
    assert any("2 new" in s.value for s in at.success)
    with open_readonly(db) as con:
        assert con.execute("SELECT count(*) FROM trajectories WHERE run_id = 'run_upload'").fetchone()[0] == 2
