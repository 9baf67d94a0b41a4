"""Controllers through the real run orchestrator: the log holds one valid trajectory per question."""
from __future__ import annotations

from engine.controllers import get_controller
from engine.mock_llm import reply_tool_call
from engine.runs import RunInputs, RunSpec, execute_run
from trajscope.format import Question, iter_trajectories
from test_controllers_support import CORPUS, RETRIEVER, environment_factory, mock_server


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
