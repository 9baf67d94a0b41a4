"""`trajscope run` end to end on the demo set with the real controllers, against the mock server."""
from __future__ import annotations

import json

import duckdb
from click.testing import CliRunner

from trajscope.cli import main
from trajscope.engine.mock_llm import reply_tool_call
from trajscope.format import iter_trajectories


def search_then_final(request):
    """Tool protocol: search once, then answer."""
    if any(m.get("role") == "tool" for m in request.messages):
        return reply_tool_call("final", {"answer": "Denmore"})
    return reply_tool_call("search", {"query": "bridge"})


def run_cli(*args: str):
    return CliRunner().invoke(main, ["run", *args], catch_exceptions=False)


def test_run_command_logs_and_ingests_the_demo_with_a_real_controller(mock_llm, tmp_path):
    mock_llm.responder = search_then_final
    db, out = tmp_path / "w.duckdb", tmp_path / "runs"
    args = ["--dataset", "demo", "--controller", "read_gate", "--condition", "baseline", "--model", mock_llm.model_spec,
            "--n", "3", "--seed", "7", "--concurrency", "2", "--db", str(db), "--out", str(out),
            "--retriever", "bm25", "--no-cache", "--no-progress", "--param", "max_turns=4"]
    result = run_cli(*args)
    assert result.exit_code == 0, result.output
    [log] = list(out.glob("*.jsonl"))
    trajectories = [d.trajectory for d in iter_trajectories(log)]
    assert len(trajectories) == 3
    for t in trajectories:
        assert t.run.controller == "read_gate" and t.run.condition == "baseline" and t.run.seed == 7
        assert t.run.config["params"] == {"max_turns": 4}
        assert [s.__struct_config__.tag for s in t.steps][:1] == ["search"] and t.final_answer == "Denmore"
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM trajectories").fetchall() == [(3,)]

    again = run_cli(*args, "--resume")
    assert again.exit_code == 0 and "0 new, 3 resumed" in again.output


def test_matrix_runs_conditions_on_the_same_question_ids(mock_llm, tmp_path):
    mock_llm.responder = search_then_final
    matrix = tmp_path / "m.yaml"
    matrix.write_text(json.dumps({
        "dataset": "demo", "n": 2, "seed": 1, "model": mock_llm.model_spec, "retriever": "bm25",
        "cache": False, "progress": False, "out": str(tmp_path / "runs"), "params": {"max_turns": 3},
        "runs": [{"controller": "read_gate", "condition": "baseline"},
                 {"controller": "read_gate", "condition": "read_gate", "params": {"correction_cap": 1}}],
    }))
    result = run_cli("--matrix", str(matrix), "--no-ingest")
    assert result.exit_code == 0, result.output
    logs = sorted((tmp_path / "runs").glob("*.jsonl"))
    assert len(logs) == 2
    ids = [sorted(d.trajectory.question.question_id for d in iter_trajectories(p)) for p in logs]
    assert ids[0] == ids[1] and len(ids[0]) == 2
    params = {d.trajectory.run.condition: d.trajectory.run.config["params"] for p in logs for d in iter_trajectories(p)}
    assert params == {"baseline": {"max_turns": 3}, "read_gate": {"max_turns": 3, "correction_cap": 1}}


def test_matrix_entries_may_not_change_the_question_selection(tmp_path):
    matrix = tmp_path / "m.yaml"
    matrix.write_text("dataset: demo\nn: 5\nruns:\n  - controller: read_gate\n    seed: 3\n")
    result = CliRunner().invoke(main, ["run", "--matrix", str(matrix)])
    assert result.exit_code != 0 and "runs[1].seed: set it at the top level" in result.output


def test_missing_arguments_and_unknown_controller_are_one_line_errors(tmp_path):
    result = CliRunner().invoke(main, ["run", "--dataset", "demo"])
    assert result.exit_code == 2 and "--controller are required" in result.output
    result = CliRunner().invoke(main, ["run", "--dataset", "demo", "--controller", "nope", "--no-ingest"])
    assert result.exit_code == 1 and "unknown controller 'nope'" in result.output and "Traceback" not in result.output


def test_runs_record_whether_the_controller_has_a_read_action(mock_llm, tmp_path):
    mock_llm.responder = search_then_final
    db = tmp_path / "w.duckdb"
    for controller in ("read_gate", "vanilla_rag"):
        result = run_cli("--dataset", "demo", "--controller", controller, "--model", mock_llm.model_spec, "--n", "2",
                         "--db", str(db), "--out", str(tmp_path / "runs"), "--retriever", "bm25", "--no-cache",
                         "--no-progress")
        assert result.exit_code == 0, result.output
    with duckdb.connect(str(db), read_only=True) as con:
        protocol = con.execute("SELECT r.controller, p.read_action FROM run_protocol p JOIN runs r USING (run_id) "
                               "ORDER BY 1").fetchall()
    assert protocol == [("read_gate", True), ("vanilla_rag", False)]


def test_a_rerun_served_from_the_response_cache_marks_its_steps_cached(mock_llm, tmp_path):
    mock_llm.responder = search_then_final
    db, cache = tmp_path / "w.duckdb", tmp_path / "responses.sqlite"
    for run_id in ("first", "again"):
        result = run_cli("--dataset", "demo", "--controller", "read_gate", "--model", mock_llm.model_spec, "--n", "2",
                         "--seed", "3", "--run-id", run_id, "--db", str(db), "--out", str(tmp_path / "runs"),
                         "--retriever", "bm25", "--cache", str(cache), "--no-progress")
        assert result.exit_code == 0, result.output
    with duckdb.connect(str(db), read_only=True) as con:
        calls = dict(con.execute("SELECT t.run_id, list(DISTINCT s.cached) FROM steps s JOIN trajectories t "
                                 "USING (trajectory_id) WHERE s.tokens_in IS NOT NULL GROUP BY 1").fetchall())
        summary = dict(con.execute("SELECT run_id, cached_calls FROM run_summary").fetchall())
    assert calls == {"first": [False], "again": [True]}
    assert summary["first"] == 0 and summary["again"] > 0


def test_demo_command_builds_and_judges_the_warehouse(mock_llm, tmp_path):
    mock_llm.responder = search_then_final
    db = tmp_path / "demo.duckdb"
    result = CliRunner().invoke(main, ["demo", "--model", mock_llm.model_spec, "--n", "2", "--no-app", "--db", str(db),
                                       "--out", str(tmp_path / "runs"),
                                       "--conditions", "read_gate/baseline,vanilla_rag/k5"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert result.output.count("judged 1 run (") == 2  # each run is judged as it finishes (the live build)
    with duckdb.connect(str(db), read_only=True) as con:
        coverage = con.execute("SELECT extractor, count(*) FROM entity_coverage GROUP BY 1 ORDER BY 1").fetchall()
        checks = con.execute("SELECT count(*) FROM answer_checks").fetchall()
        chunks = con.execute("SELECT count(*) FROM chunks").fetchall()[0][0]
    assert coverage == [("regex", 4), ("spacy", 4)] and checks == [(4,)]  # 2 runs x 2 questions
    assert chunks > 250  # the demo corpus, so replays can show passages
