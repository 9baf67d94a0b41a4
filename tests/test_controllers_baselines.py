"""A-RAG baseline, direct answer and vanilla top-k RAG against the scripted mock server."""
from __future__ import annotations

import pytest
from test_controllers_support import CORPUS, QUESTION, RETRIEVER, kinds, mock_server, run_controller

from trajscope.engine.controllers import get_controller
from trajscope.engine.mock_llm import reply_json, reply_text, reply_tool_call
from trajscope.engine.prompts import load_prompt
from trajscope.format import ContextInjectionStep, FinalStep, ForcedAnswerStep, ReadStep, SearchStep


def test_arag_uses_its_three_tools_and_a_plain_reply_is_its_answer():
    with mock_server() as server:
        server.enqueue(reply_tool_call("keyword_search", {"keywords": ["North", "Star", "publisher"]}),
                       reply_tool_call("semantic_search", {"query": "who founded The North Star"}),
                       reply_tool_call("read_chunk", {"chunk_id": "c2"}),
                       reply_text("Helen Pitts"))
        traj = run_controller(get_controller("arag"), server)
        tools = [t["function"]["name"] for t in server.chat_requests[0].body["tools"]]
    assert tools == ["keyword_search", "semantic_search", "read_chunk", "final"]
    assert kinds(traj) == ["keyword_search", "semantic_search", "read", "final"]
    assert traj.steps[2].tool_name == "read_chunk"
    assert traj.final_answer == "Helen Pitts" and traj.end_reason == "final"


def test_arag_forces_the_paper_answer_prompt_after_15_loops():
    with mock_server() as server:
        server.extend(reply_tool_call("semantic_search", {"query": f"q{i}"}) for i in range(15))
        server.enqueue(reply_text("Frederick Douglass, uncertain"))
        traj = run_controller(get_controller("arag"), server)
        last = server.chat_requests[-1].messages[-1]["content"]
    assert kinds(traj) == ["semantic_search"] * 15 + ["forced_answer"]
    assert last == load_prompt("force_final_answer")
    assert isinstance(traj.steps[-1], ForcedAnswerStep)
    assert traj.end_reason == "loop_cap"


def test_arag_leaves_the_temperature_to_the_model_setting():
    with mock_server() as server:
        server.enqueue(reply_text("Helen"))
        run_controller(get_controller("arag"), server, temperature=0.7)
        body = server.chat_requests[0].body
    assert body["temperature"] == 0.7


def test_direct_answer_makes_one_call_without_retrieval():
    with mock_server() as server:
        server.enqueue(reply_text("Anna Murray", tokens_in=40, tokens_out=3))
        traj = run_controller(get_controller("direct"), server)
        request = server.chat_requests[0].body
    assert "tools" not in request and QUESTION.text in request["messages"][0]["content"]
    assert kinds(traj) == ["final"]
    step = traj.steps[0]
    assert isinstance(step, FinalStep) and step.answer == "Anna Murray"
    assert (step.tokens_in, step.tokens_out, step.raw) == (40, 3, "Anna Murray")


def test_direct_answer_under_the_json_protocol_reads_the_answer_field():
    with mock_server() as server:
        server.enqueue(reply_json({"answer": "Helen Pitts Douglass"}))
        traj = run_controller(get_controller("direct"), server, protocol="json")
        request = server.chat_requests[0].body
    assert request["response_format"]["json_schema"]["schema"]["required"] == ["answer"]
    assert traj.final_answer == "Helen Pitts Douglass"


@pytest.mark.parametrize(("condition", "k"), [("k3", 3), ("k5", 5), ("k10", 10)])
def test_vanilla_rag_puts_the_top_k_passages_in_the_prompt(condition, k):
    expected = [h.chunk_id for h in RETRIEVER.search(QUESTION.text, k)]
    with mock_server() as server:
        server.enqueue(reply_text("Helen Pitts Douglass"))
        traj = run_controller(get_controller("vanilla_rag", condition), server)
        prompt = server.chat_requests[0].messages[0]["content"]
    search, injected, final = traj.steps
    assert isinstance(search, SearchStep) and [c.chunk_id for c in search.candidates] == expected
    assert search.args == {"query": QUESTION.text, "k": k}
    assert isinstance(injected, ContextInjectionStep) and [p.chunk_id for p in injected.passages] == expected
    assert all(CORPUS[c].text in prompt for c in expected)
    assert not any(isinstance(s, ReadStep) for s in traj.steps)
    assert final.answer == "Helen Pitts Douglass"


def test_an_unparsable_json_answer_is_salvaged_and_recorded_as_malformed():
    with mock_server() as server:
        server.enqueue(reply_text("Helen Pitts Douglass"))
        traj = run_controller(get_controller("direct"), server, protocol="json")
    error, final = traj.steps
    assert error.error_type == "malformed_answer" and error.message == "reply is not valid JSON"
    assert error.tokens_in is None and final.tokens_in == 100  # the reply is charged once
    assert final.answer == "Helen Pitts Douglass" and traj.end_reason == "final"
