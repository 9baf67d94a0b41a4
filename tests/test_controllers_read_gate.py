"""Read-Gate family against the scripted mock server: gates, caps, injection, forced answers, errors."""
from __future__ import annotations

import json

import pytest
from test_controllers_support import QUESTION, kinds, mock_server, run_controller

from trajscope.engine.controllers import get_controller
from trajscope.engine.mock_llm import (
    reply_error,
    reply_json,
    reply_malformed,
    reply_text,
    reply_tool_call,
    reply_tool_calls,
)
from trajscope.engine.prompts import load_prompt
from trajscope.format import (
    ContextInjectionStep,
    ErrorStep,
    FinalStep,
    ForcedAnswerStep,
    GateRejectionStep,
    ReadStep,
    decode_trajectory,
    encode,
)

SEARCH = reply_tool_call("search", {"query": "North Star publisher"})
READ_C1 = reply_tool_call("read", {"chunk_id": "c1"})


def final(answer: str = "Helen Pitts Douglass") -> object:
    return reply_tool_call("final", {"answer": answer})


def test_voluntary_baseline_accepts_a_no_read_final():
    with mock_server() as server:
        server.enqueue(SEARCH, final("Anna Murray"))
        traj = run_controller(get_controller("read_gate", "baseline"), server)
    assert kinds(traj) == ["search", "final"]
    assert traj.end_reason == "final" and traj.final_answer == "Anna Murray"
    assert traj.trajectory_id == "test-run::q1"
    # temperature 0 is the condition's decoding setting, sent with every request
    assert all(r.body["temperature"] == 0.0 for r in server.chat_requests)


def test_read_gate_rejects_a_final_after_search_without_read_then_accepts_after_read():
    with mock_server() as server:
        server.enqueue(SEARCH, final("Anna Murray"), READ_C1, final())
        traj = run_controller(get_controller("read_gate", "read_gate"), server)
        requests = server.chat_requests
    assert kinds(traj) == ["search", "gate_rejection", "read", "final"]
    rejection = traj.steps[1]
    assert isinstance(rejection, GateRejectionStep)
    assert rejection.gate == "read_gate" and rejection.rejected_answer == "Anna Murray"
    assert rejection.observation == load_prompt("gate_read")
    # the corrective observation is what the model sees as the reply to its final call
    assert requests[2].messages[-1] == {"role": "tool", "tool_call_id": "call_2_0",
                                        "content": load_prompt("gate_read")}
    assert traj.final_answer == "Helen Pitts Douglass" and traj.end_reason == "final"
    assert traj.metadata["gate_rejections"] == 1 and traj.metadata["read_count"] == 1


def test_read_gate_accepts_a_final_when_nothing_was_searched():
    with mock_server() as server:
        server.enqueue(final("Helen Pitts"))
        traj = run_controller(get_controller("read_gate", "read_gate"), server)
    assert kinds(traj) == ["final"]
    assert traj.final_answer == "Helen Pitts"


@pytest.mark.parametrize("cap", [2, 1])
def test_read_gate_stops_rejecting_at_its_correction_cap(cap):
    with mock_server() as server:
        server.enqueue(SEARCH, final("a1"), final("a2"), final("a3"))
        traj = run_controller(get_controller("read_gate", "read_gate", correction_cap=cap), server)
        n_requests = len(server.chat_requests)
    assert kinds(traj) == ["search"] + ["gate_rejection"] * cap + ["final"]
    assert traj.final_answer == f"a{cap + 1}"
    assert n_requests == cap + 2


def test_lowev_gate_rejects_until_read_passages_cover_the_question_entities():
    question = QUESTION.__class__(question_id="q2", text="Did Frederick Douglass publish The North Star?")
    with mock_server() as server:
        server.enqueue(
            reply_tool_call("search", {"query": "Frederick Douglass North Star"}),
            reply_tool_call("read", {"chunk_id": "c2"}),  # mentions Douglass only: coverage 50%
            final("yes"),
            READ_C1,
            final("yes"),
        )
        traj = run_controller(get_controller("read_gate", "lowev"), server, question=question)
    assert kinds(traj) == ["search", "read", "gate_rejection", "read", "final"]
    rejection = traj.steps[2]
    assert rejection.gate == "lowev" and "North Star" in rejection.reason
    assert "50%" in rejection.observation


def test_full_gate_rejects_an_answer_seen_only_in_snippets():
    with mock_server() as server:
        # c3's snippet names Frances Ames; the passage read (c1) does not
        server.enqueue(SEARCH, READ_C1, final("Frances Ames"), reply_tool_call("read", {"chunk_id": "c3"}),
                       final("Frances Ames"))
        traj = run_controller(get_controller("read_gate", "full"), server)
    assert kinds(traj) == ["search", "read", "gate_rejection", "read", "final"]
    assert traj.steps[2].gate == "snippet_only"


def test_full_gate_puts_the_read_predicate_first():
    with mock_server() as server:
        server.enqueue(SEARCH, final("x"), READ_C1, final("Frederick Douglass"))
        traj = run_controller(get_controller("read_gate", "full"), server)
    assert [s.gate for s in traj.steps if isinstance(s, GateRejectionStep)] == ["read_gate"]
    assert traj.final_answer == "Frederick Douglass"


def test_context_injection_appends_the_top_passage_without_a_read():
    with mock_server() as server:
        server.enqueue(SEARCH, final())
        traj = run_controller(get_controller("read_gate", "context_injection"), server)
        second = server.chat_requests[1]
    assert kinds(traj) == ["search", "context_injection", "final"]
    injected = traj.steps[1]
    assert isinstance(injected, ContextInjectionStep)
    assert injected.passages[0].chunk_id == traj.steps[0].candidates[0].chunk_id
    assert "[Context: top-ranked passage]" in second.messages[-1]["content"]
    assert traj.metadata["read_count"] == 0


def test_strict_prompt_only_changes_the_system_prompt():
    with mock_server() as server:
        server.enqueue(SEARCH, final())
        traj = run_controller(get_controller("read_gate", "strict_prompt"), server)
        system = server.chat_requests[0].messages[0]["content"]
    assert load_prompt("read_gate_strict_rules") in system
    assert kinds(traj) == ["search", "final"]  # no gate: the prompt is the only intervention


def test_turn_cap_forces_an_answer_with_tools_disabled():
    with mock_server() as server:
        server.extend(reply_tool_call("search", {"query": f"query {i}"}) for i in range(10))
        server.enqueue(reply_text("Frederick Douglass"))
        traj = run_controller(get_controller("read_gate", "read_gate"), server)
        last = server.chat_requests[-1]
        n_requests = len(server.chat_requests)
    assert n_requests == 11
    assert kinds(traj) == ["search"] * 10 + ["forced_answer"]
    forced = traj.steps[-1]
    assert isinstance(forced, ForcedAnswerStep) and forced.answer == "Frederick Douglass"
    assert traj.end_reason == "loop_cap" and traj.final_answer == "Frederick Douglass"
    assert last.body["tool_choice"] == "none"
    assert "You have used all 10 actions" in last.messages[-1]["content"]


def test_every_model_step_carries_the_accounting_of_its_completion():
    with mock_server() as server:
        server.enqueue(reply_tool_call("search", {"query": "North Star"}, tokens_in=120, tokens_out=10),
                       reply_tool_call("final", {"answer": "Helen"}, tokens_in=300, tokens_out=7))
        traj = run_controller(get_controller("read_gate", "baseline"), server, prices={"mock": (1.0, 2.0)})
    search, done = traj.steps
    assert (search.tokens_in, search.tokens_out) == (120, 10)
    assert (done.tokens_in, done.tokens_out) == (300, 7)
    assert search.cost_usd == pytest.approx(120 / 1000 * 1.0 + 10 / 1000 * 2.0)
    assert done.latency_ms is not None and done.latency_ms > 0
    assert json.loads(search.raw)["tool_calls"][0] == {"name": "search", "arguments": {"query": "North Star"}}
    assert traj.started_at.endswith("Z") and traj.finished_at >= traj.started_at
    assert decode_trajectory(encode(traj)) == traj  # the record is valid canonical data


def test_json_protocol_drives_the_same_loop_with_structured_actions():
    with mock_server() as server:
        server.enqueue(reply_json({"action": "search", "arguments": {"query": "North Star"}}),
                       reply_json({"action": "final", "arguments": {"answer": "x"}}),
                       reply_json({"action": "read", "arguments": {"chunk_id": ["c1", "c2"]}}),
                       reply_json({"action": "final", "arguments": {"answer": "Helen Pitts"}}))
        traj = run_controller(get_controller("read_gate", "read_gate"), server, protocol="json")
        first = server.chat_requests[0].body
        second = server.chat_requests[1].messages
    assert kinds(traj) == ["search", "gate_rejection", "read", "final"]
    assert "tools" not in first
    schema = first["response_format"]["json_schema"]["schema"]
    assert [b["properties"]["action"]["const"] for b in schema["anyOf"]] == ["search", "read", "final"]
    assert second[-2]["role"] == "assistant" and second[-1]["role"] == "user"
    assert [p.chunk_id for p in traj.steps[2].passages] == ["c1", "c2"]


def test_malformed_actions_are_recorded_and_corrected():
    with mock_server() as server:
        server.enqueue(reply_malformed(), reply_json({"action": "fly", "arguments": {}}),
                       reply_json({"action": "search", "arguments": {"query": "North Star"}}),
                       reply_json({"action": "final", "arguments": {"answer": "Helen"}}))
        traj = run_controller(get_controller("read_gate", "baseline"), server, protocol="json")
        third = server.chat_requests[2].messages
    assert kinds(traj) == ["error", "error", "search", "final"]
    bad_json, unknown = traj.steps[0], traj.steps[1]
    assert isinstance(bad_json, ErrorStep) and bad_json.error_type == "malformed_action"
    assert bad_json.raw == '{"action": "search", "arguments": {"query": '
    assert unknown.message == "unknown action 'fly'"
    assert third[-1]["content"].startswith("[Invalid action: unknown action 'fly'")
    assert traj.end_reason == "final" and traj.metadata["invalid_actions"] == 2


def test_malformed_tool_arguments_and_a_missing_tool_call_are_invalid_actions():
    with mock_server() as server:
        server.enqueue(reply_tool_call("search", '{"query": '), reply_text("I think it is Helen."),
                       reply_tool_calls([("search", {"query": "North Star"}), ("read", {"chunk_id": "c1"})]),
                       final())
        traj = run_controller(get_controller("read_gate", "read_gate"), server)
        third = server.chat_requests[2].messages
    assert kinds(traj) == ["error", "error", "search", "read", "final"]
    assert traj.steps[0].message.startswith("arguments are not a JSON object")
    assert traj.steps[1].message == "the reply called no tool"
    assert third[-1]["role"] == "user" and third[-2] == {"role": "assistant", "content": "I think it is Helen."}
    # two calls in one reply: the reply's cost is charged once, to the first step
    assert traj.steps[2].tokens_in == 100 and traj.steps[3].tokens_in is None


def test_too_many_invalid_actions_end_the_episode_as_an_error_not_an_exception():
    with mock_server() as server:
        server.extend(reply_malformed() for _ in range(4))
        traj = run_controller(get_controller("read_gate", "read_gate"), server, protocol="json")
    assert kinds(traj) == ["error"] * 4
    assert traj.end_reason == "error" and "4 invalid actions" in traj.error


def test_a_model_error_becomes_an_error_trajectory_keeping_earlier_steps():
    with mock_server() as server:
        server.enqueue(SEARCH, reply_error(500, "boom"))
        traj = run_controller(get_controller("read_gate", "read_gate"), server)
    assert kinds(traj) == ["search", "error"]
    assert traj.steps[-1].error_type == "model_error:server_error"
    assert traj.end_reason == "error" and "boom" in traj.error


def test_the_environment_tool_errors_reach_the_model_and_count_as_invalid():
    with mock_server() as server:
        server.enqueue(reply_tool_call("read", {"chunk_id": "nope"}), reply_tool_call("search", {}), final())
        traj = run_controller(get_controller("read_gate", "read_gate"), server)
    read, bad_search, done = traj.steps
    assert isinstance(read, ReadStep) and read.passages == []
    assert isinstance(bad_search, ErrorStep) and bad_search.error_type == "malformed_arguments"
    assert isinstance(done, FinalStep)
    assert traj.metadata["invalid_actions"] == 1


def test_history_is_trimmed_to_the_configured_token_budget():
    with mock_server() as server:
        server.extend(reply_tool_call("search", {"query": f"North Star {i}"}) for i in range(4))
        server.enqueue(final())
        run_controller(get_controller("read_gate", "baseline", max_history_tokens=400), server)
        last = server.chat_requests[-1].messages
    assert any("elided" in (m.get("content") or "") for m in last)
    assert last[0]["role"] == "system" and last[1]["content"] == f"Question: {QUESTION.text}"
    assert isinstance(last[-1]["content"], str) and "elided" not in last[-1]["content"]


def test_default_correction_cap_is_the_turn_cap_so_more_than_two_corrections_are_possible():
    # Read-Gate App. F: +lowev and full average "over 2 corrections per question"; a hard cap of 2
    # could not produce that figure, so by default only the 10-turn cap bounds the rejections.
    assert get_controller("read_gate", "read_gate").params["correction_cap"] is None
    with mock_server() as server:
        server.enqueue(SEARCH, final("a1"), final("a2"), final("a3"), final("a4"), READ_C1, final("a5"))
        traj = run_controller(get_controller("read_gate", "read_gate"), server)
    assert kinds(traj) == ["search"] + ["gate_rejection"] * 4 + ["read", "final"]
    assert traj.final_answer == "a5" and traj.metadata["gate_rejections"] == 4
