"""Controllers through the real run orchestrator: the log holds one valid trajectory per question."""
from __future__ import annotations

from test_controllers_support import CORPUS, RETRIEVER, environment_factory, mock_server

from trajscope.engine.controllers import get_controller
from trajscope.engine.mock_llm import reply_tool_call
from trajscope.engine.runs import RunInputs, RunSpec, execute_run
from trajscope.format import Question, iter_trajectories


def test_read_gate_runs_under_the_orchestrator_and_is_logged_and_judged(tmp_path):
    questions = [Question(question_id=f"q{i}", text="Who married the publisher of The North Star?",
                          gold_answer="Helen Pitts Douglass") for i in range(3)]

    def respond(request):
        last = request.messages[-1]
        if last["role"] == "user":
            return reply_tool_call("search", {"query": "North Star publisher"})
        if "Action Rejected" in (last.get("content") or ""):
            return reply_tool_call("read", {"chunk_id": "c2"})
        return reply_tool_call("final", {"answer": "Helen Pitts Douglass"})

    with mock_server(respond) as server:
        controller = get_controller("read_gate", "read_gate")
        inputs = RunInputs(dataset_name="fixture", questions=questions, corpus=CORPUS, controller=controller,
                           retriever=RETRIEVER, make_environment=environment_factory(CORPUS, RETRIEVER))
        spec = RunSpec(dataset="fixture", controller="read_gate", condition="read_gate", model=server.model_spec,
                       concurrency=2, out_dir=tmp_path, cache=False, progress=False)
        summary = execute_run(spec, inputs)
    assert summary.n_completed == 3 and summary.n_errors == 0
    trajectories = [d.trajectory for d in iter_trajectories(summary.log_path)]
    assert sorted(t.question.question_id for t in trajectories) == ["q0", "q1", "q2"]
    for t in trajectories:
        assert [type(s).__struct_config__.tag for s in t.steps] == ["search", "gate_rejection", "read", "final"]
        assert t.run.controller == "read_gate" and t.run.condition == "read_gate"
        assert t.trajectory_id == f"{summary.run_id}::{t.question.question_id}"
        assert {j.judge: j.score for j in t.judgments}["em"] == 1.0


def test_engine_and_warehouse_count_reads_by_one_rule(tmp_path):
    # A read of an unknown chunk id returns no passage: neither the engine's counter nor the
    # warehouse's read_count counts it; the warehouse counts it as a failed read.
    from trajscope.warehouse import open_readonly

    questions = [Question(question_id="q0", text="Who married the publisher of The North Star?",
                          gold_answer="Helen Pitts Douglass")]

    def respond(request):
        tools = sum(1 for m in request.messages if m["role"] == "tool")
        script = [("search", {"query": "North Star publisher"}), ("read", {"chunk_id": "no-such-chunk"}),
                  ("read", {"chunk_id": "c2"}), ("final", {"answer": "Helen Pitts Douglass"})]
        name, args = script[min(tools, len(script) - 1)]
        return reply_tool_call(name, args)

    db = tmp_path / "w.duckdb"
    with mock_server(respond) as server:
        controller = get_controller("read_gate", "read_gate")
        inputs = RunInputs(dataset_name="fixture", questions=questions, corpus=CORPUS, controller=controller,
                           retriever=RETRIEVER, make_environment=environment_factory(CORPUS, RETRIEVER))
        spec = RunSpec(dataset="fixture", controller="read_gate", condition="read_gate", model=server.model_spec,
                       out_dir=tmp_path, cache=False, progress=False, db_path=db)
        summary = execute_run(spec, inputs)
    (t,) = [d.trajectory for d in iter_trajectories(summary.log_path)]
    kinds = [type(s).__struct_config__.tag for s in t.steps]
    assert kinds.count("read") == 2 and t.metadata["read_count"] == 1
    with open_readonly(db) as con:
        stored = con.execute("SELECT read_count, failed_read_count FROM trajectory_facts").fetchall()
        profile = con.execute("SELECT read_action, read_action_reason, profile_source FROM run_capabilities").fetchall()
    assert stored == [(t.metadata["read_count"], 1)]
    assert profile == [(True, "controller read_gate has a read action", "recorded by the log")]
