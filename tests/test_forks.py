"""Counterfactual forks against the loopback mock: the prefix comes from the cache, each intervention
changes exactly what it says, and the child records its parent and step."""
from __future__ import annotations

import json

import msgspec
import pytest
from test_controllers_support import CORPUS, RETRIEVER, environment_factory, mock_server

from trajscope.engine.controllers import get_controller
from trajscope.engine.forks import ForkError, comparable, fork_many, parse_intervention
from trajscope.engine.mock_llm import reply_tool_call
from trajscope.engine.prompts import render_prompt
from trajscope.engine.runs import RunInputs, RunSpec, execute_run
from trajscope.format import (
    FinalStep,
    GateRejectionStep,
    Question,
    ReadStep,
    SearchStep,
    fork_step_refusal,
    iter_trajectories,
)

QUESTIONS = [Question(question_id=f"q{i}", text="Who married the publisher of The North Star?",
                      gold_answer="Helen Pitts Douglass", gold_chunk_ids=["c2"]) for i in range(3)]


def agent(request):
    """search -> read c1 -> final; answers right only once Helen Pitts's passage is in the context."""
    tools = sum(1 for m in request.messages if m["role"] == "tool")
    seen = "\n".join(str(m.get("content") or "") for m in request.messages)
    if "Action Rejected" in (request.messages[-1].get("content") or ""):
        return reply_tool_call("read", {"chunk_id": "c4"})
    if tools == 0:
        return reply_tool_call("search", {"query": "North Star publisher"})
    if tools == 1:
        return reply_tool_call("read", {"chunk_id": "c1"})
    answer = "Helen Pitts Douglass" if "married Helen Pitts" in seen else "Anna Murray"
    return reply_tool_call("final", {"answer": answer})


def inputs_for(controller, questions=QUESTIONS, corpus=CORPUS, retriever=RETRIEVER):
    return RunInputs(dataset_name="fixture", questions=questions, corpus=corpus, controller=controller,
                     retriever=retriever, make_environment=environment_factory(corpus, retriever))


def run_parent(server, tmp_path, controller="read_gate", condition="baseline", questions=QUESTIONS, **extra):
    ctrl = get_controller(controller, condition)
    spec = RunSpec(dataset="fixture", controller=controller, condition=condition, model=server.model_spec,
                   out_dir=tmp_path / "runs", cache=True, cache_path=tmp_path / "cache.sqlite", progress=False,
                   concurrency=1, **extra)
    summary = execute_run(spec, inputs_for(ctrl, questions))
    parents = [d.trajectory for d in iter_trajectories(summary.log_path)]
    return sorted(parents, key=lambda t: t.question.question_id)


def fork(server, tmp_path, parents, at, intervention, **kwargs):
    ctrl = get_controller(parents[0].run.controller, parents[0].run.condition)
    (summary,) = fork_many(parents, at, intervention, out_dir=tmp_path / "forks", cache_path=tmp_path / "cache.sqlite",
                           inputs=inputs_for(ctrl), **kwargs)
    children = [d.trajectory for d in iter_trajectories(summary.run.log_path)] if summary.run else []
    return summary, sorted(children, key=lambda t: t.question.question_id)


def tool_call_args(message):
    return [json.loads(c["function"]["arguments"]) | {"name": c["function"]["name"]} for c in message["tool_calls"]]


def test_force_read_prefix_is_cached_identical_and_the_read_is_what_the_model_sees(tmp_path):
    with mock_server(agent) as server:
        (parent, *_) = run_parent(server, tmp_path, questions=QUESTIONS[:1])
        assert [type(s).__name__ for s in parent.steps] == ["SearchStep", "ReadStep", "FinalStep"]
        before = len(server.chat_requests)
        summary, (child,) = fork(server, tmp_path, [parent], "1", "force_read:c2")
        new = server.chat_requests[before:]
    # Step 0 was answered from the cache, step 1's reply was replaced: one live call, for step 2.
    assert len(new) == 1 and summary.run.model_requests == 1
    assert child.fork.prefix_model_calls == 0 and child.fork.prefix_cache_hits == 1
    assert [comparable(s) for s in child.steps[:1]] == [comparable(s) for s in parent.steps[:1]]
    assert isinstance(child.steps[1], ReadStep) and child.steps[1].chunk_ids == ["c2"]
    messages = new[0].messages
    assert tool_call_args(messages[-2])[0] == {"chunk_id": "c2", "name": "read"}
    assert CORPUS["c2"].text in messages[-1]["content"] and CORPUS["c1"].text not in messages[-1]["content"]
    # Everything before the fork step is the parent's own request, byte for byte.
    assert messages[:-2] == server.chat_requests[2].messages[:-2]
    assert child.final_answer == "Helen Pitts Douglass" and parent.final_answer == "Anna Murray"
    assert (child.fork.parent_trajectory_id, child.fork.step_index, child.fork.intervention,
            child.fork.argument) == (parent.trajectory_id, 1, "force_read", "c2")
    assert child.run.forked_from == parent.run.run_id and child.run.intervention == "fork:force_read:c2"
    assert child.run.config["fork"]["rule"] == "1" and child.run.run_id != parent.run.run_id


def test_replace_query_changes_only_the_query_sent_back(tmp_path):
    with mock_server(agent) as server:
        (parent,) = run_parent(server, tmp_path, questions=QUESTIONS[:1])
        before = len(server.chat_requests)
        _, (child,) = fork(server, tmp_path, [parent], "0", "replace_query:Frederick Douglass married")
        new = server.chat_requests[before:]
    # The query's reply is the cached one, rewritten: the first live call is the one after the search.
    assert isinstance(child.steps[0], SearchStep) and child.steps[0].query == "Frederick Douglass married"
    assert tool_call_args(new[0].messages[-2]) == [{"query": "Frederick Douglass married", "name": "search"}]
    assert [c.chunk_id for c in child.steps[0].candidates] == [h.chunk_id for h in
                                                               RETRIEVER.search("Frederick Douglass married")]
    assert child.fork.prefix_model_calls == 0 and len(new) == 2


def test_remove_decoy_drops_it_from_the_candidates_and_the_observation(tmp_path):
    with mock_server(agent) as server:
        (parent,) = run_parent(server, tmp_path, questions=QUESTIONS[:1])
        listed = [c.chunk_id for c in parent.steps[0].candidates]
        decoy = listed[0]
        before = len(server.chat_requests)
        _, (child,) = fork(server, tmp_path, [parent], "0", f"remove_decoy:{decoy}")
        new = server.chat_requests[before:]
    assert [c.chunk_id for c in child.steps[0].candidates] == [c for c in listed if c != decoy]
    assert [c.rank for c in child.steps[0].candidates] == list(range(1, len(listed)))
    observation = new[0].messages[-1]["content"]
    assert f"] {decoy} " not in observation and f"] {decoy}\n" not in observation
    assert all(c in observation for c in listed if c != decoy)


def test_reject_final_sends_the_read_gate_corrective_observation(tmp_path):
    with mock_server(agent) as server:
        (parent,) = run_parent(server, tmp_path, questions=QUESTIONS[:1])
        before = len(server.chat_requests)
        _, (child,) = fork(server, tmp_path, [parent], "final", "reject_final")
        new = server.chat_requests[before:]
    assert [comparable(s) for s in child.steps[:2]] == [comparable(s) for s in parent.steps[:2]]
    rejection = child.steps[2]
    assert isinstance(rejection, GateRejectionStep) and rejection.rejected_answer == "Anna Murray"
    assert new[0].messages[-1]["content"] == render_prompt("gate_read")
    assert child.fork.step_index == 2 and child.fork.rule == "final" and child.fork.prefix_model_calls == 0


def register_reply(body: dict, prompt: str, *, r2_found: bool, clears: bool = False) -> str:
    """ExecutionRAG's register model on the North Star question: the two-item plan at init; an update
    resolves R1 while it is active, then R2 once `r2_found` (`clears`: both at once)."""
    schema = body["response_format"].get("json_schema", {}).get("schema") or body["response_format"]["schema"]
    if "items" in schema["properties"]:
        return json.dumps({"items": [{"sub_question": "Who published The North Star?"},
                                     {"sub_question": "Whom did that publisher marry?"}]})
    r1 = [{"id": "R1", "status": "resolved", "note": "Frederick Douglass", "supporting_chunk_ids": ["c1"]}]
    r2 = [{"id": "R2", "status": "resolved", "note": "Helen Pitts", "supporting_chunk_ids": ["c2"]}]
    if clears:
        return json.dumps({"updates": r1 + r2})
    if "R1 [active]" in prompt:
        return json.dumps({"updates": r1})
    return json.dumps({"updates": r2 if r2_found else []})


def stopping_register_agent(request, clears=False):
    """ExecutionRAG's tool agent: a register whose R2 resolves only from c2; the agent searches, then stops
    without reading ("Anna Murray"); told to read first, it reads c2 (the register then clears).
    `clears`: every update resolves both items, and the register's clearing ends the episode (no stop)."""
    body = request.body
    prompt = "\n".join(str(m.get("content") or "") for m in request.messages)
    if "response_format" in body:
        return register_reply(body, prompt, r2_found=CORPUS["c2"].text in prompt, clears=clears)
    if body.get("tools"):
        if "Action Rejected" in (request.messages[-1].get("content") or ""):
            return reply_tool_call("read_chunk", {"chunk_id": "c2"})
        if not any(m["role"] == "tool" for m in request.messages):
            return reply_tool_call("keyword_search", {"keywords": ["North", "Star", "publisher"]})
        return "Anna Murray"
    return "Helen Pitts Douglass" if "R2 [resolved]" in prompt else "Anna Murray"


def test_reject_final_rejects_the_execution_rag_agents_stop_with_the_read_gate_observation(tmp_path):
    with mock_server(stopping_register_agent) as server:
        (parent,) = run_parent(server, tmp_path, "execution_rag", "register", questions=QUESTIONS[:1])
        k = len(parent.steps) - 1
        final = parent.steps[k]
        assert isinstance(final, FinalStep) and final.args["agent_answer"] == "Anna Murray"
        before = len(server.chat_requests)
        summary, (child,) = fork(server, tmp_path, [parent], "final", "reject_final")
        new = server.chat_requests[before:]
    assert not summary.failed and child.error is None
    assert [comparable(s) for s in child.steps[:k]] == [comparable(s) for s in parent.steps[:k]]
    rejection = child.steps[k]
    assert isinstance(rejection, GateRejectionStep) and rejection.gate == "fork_reject_final"
    assert rejection.rejected_answer == "Anna Murray"  # the agent's stop, not the register's composed answer
    # The stop's reply came from the cache; the first live call is the agent's, told to read first.
    assert new[0].body.get("tools") and new[0].messages[-1]["content"] == render_prompt("gate_read")
    # The agent went on from the observation: it read c2, then stopped again (accepted: one rejection only).
    assert isinstance(child.steps[k + 1], ReadStep) and child.steps[k + 1].chunk_ids == ["c2"]
    assert isinstance(child.steps[-1], FinalStep) and child.steps[-1].args["agent_answer"] == "Anna Murray"
    # Every parent call up to the stop (the register's items, two agent turns) came from the cache.
    assert child.fork.prefix_cache_hits == before - 1 == 3


def test_reject_final_does_not_apply_to_an_execution_rag_final_the_register_composed(tmp_path):
    with mock_server(lambda request: stopping_register_agent(request, clears=True)) as server:
        (parent,) = run_parent(server, tmp_path, "execution_rag", "composed", questions=QUESTIONS[:1])
        assert isinstance(parent.steps[-1], FinalStep) and "agent_answer" not in parent.steps[-1].args
        before = len(server.chat_requests)
        summary, children = fork(server, tmp_path, [parent], "final", "reject_final")
        assert len(server.chat_requests) == before
    assert children == [] and summary.run is None
    assert "reject_final does not apply" in summary.skipped[0][1]
    assert "composed from the requirement register" in summary.skipped[0][1]
    # The one rule, as the dashboard asks it of a step: the agent variant's stop is rejectable, a composed final not.
    assert fork_step_refusal("reject_final", "final", args={"answer": "x", "agent_answer": "x"},
                             controller="execution_rag") is None
    assert "composed from the requirement register" in fork_step_refusal("reject_final", "final", args={"answer": "x"},
                                                                         controller="execution_rag")
    assert fork_step_refusal("reject_final", "final", args={"answer": "x"}, controller="read_gate") is None


def test_swap_model_sends_the_step_and_the_rest_to_the_other_model(tmp_path):
    def other_agent(request):
        return reply_tool_call("final", {"answer": "Helen Pitts"})

    with mock_server(agent) as server, mock_server(other_agent) as other:
        (parent,) = run_parent(server, tmp_path, questions=QUESTIONS[:1])
        before = len(server.chat_requests)
        _, (child,) = fork(server, tmp_path, [parent], "1", f"swap_model:{other.model_spec}")
        assert len(server.chat_requests) == before  # the prefix came from the cache, the rest went elsewhere
        assert len(other.chat_requests) == 1
        assert other.chat_requests[0].messages == server.chat_requests[1].messages
    assert child.final_answer == "Helen Pitts" and len(child.steps) == 2


def test_inject_gold_and_its_placebo_of_equal_length(tmp_path):
    with mock_server(agent) as server:
        (parent,) = run_parent(server, tmp_path, questions=QUESTIONS[:1])
        _, (gold_child,) = fork(server, tmp_path, [parent], "1", "inject_gold")
        _, (placebo_child,) = fork(server, tmp_path, [parent], "1", "placebo")
    # The placebo: the non-gold chunk whose length is nearest the gold c2's, by hand.
    target = len(CORPUS["c2"].text)
    expected = min((cid for cid in CORPUS if cid != "c2"), key=lambda cid: (abs(len(CORPUS[cid].text) - target),
                                                                            list(CORPUS).index(cid)))
    assert gold_child.steps[1].chunk_ids == ["c2"] and gold_child.fork.argument == "c2"
    assert placebo_child.steps[1].chunk_ids == [expected] and placebo_child.fork.placebo
    assert gold_child.final_answer == "Helen Pitts Douglass" and placebo_child.final_answer == "Anna Murray"


def test_a_prefix_missing_from_the_cache_fails_the_fork_without_calling_the_model(tmp_path):
    with mock_server(agent) as server:
        (parent,) = run_parent(server, tmp_path, questions=QUESTIONS[:1])
        (tmp_path / "cache.sqlite").unlink()
        before = len(server.chat_requests)
        summary, (child,) = fork(server, tmp_path, [parent], "2", "reject_final")
        assert len(server.chat_requests) == before
    assert child.end_reason == "error" and "not in the response cache" in child.error
    assert summary.failed and summary.failed[0][0] == parent.trajectory_id


def test_a_search_that_scores_otherwise_in_the_replay_fails_the_fork_naming_the_field(tmp_path):
    # What a retriever rebuilt differently in the fork's process did: one score off in its last bit.
    with mock_server(agent) as server:
        (parent,) = run_parent(server, tmp_path, questions=QUESTIONS[:1])
        search = parent.steps[0]
        score = search.candidates[1].score
        moved = [*search.candidates[:1], msgspec.structs.replace(search.candidates[1], score=score + score * 2 ** -52),
                 *search.candidates[2:]]
        edited = msgspec.structs.replace(parent, steps=[msgspec.structs.replace(search, candidates=moved),
                                                        *parent.steps[1:]])
        before = len(server.chat_requests)
        summary, (child,) = fork(server, tmp_path, [edited], "1", "force_read:c2")
        assert len(server.chat_requests) == before  # the rest never ran on a state that is not the parent's
    assert child.error.startswith("fork failed") and "diverged from the parent at step 0" in child.error
    assert f"candidates[1].score: '{score}' in the replay, '{score + score * 2 ** -52}' in the parent" in child.error
    assert summary.failed[0][0] == parent.trajectory_id


def test_interventions_that_do_not_apply_are_refused_with_the_reason(tmp_path):
    with mock_server(agent) as server:
        (parent,) = run_parent(server, tmp_path, questions=QUESTIONS[:1])
        summary, children = fork(server, tmp_path, [parent], "1", "remove_decoy:c1")
    assert children == [] and "remove_decoy does not apply at step 1" in summary.skipped[0][1]
    with pytest.raises(ForkError, match="unknown intervention"):
        parse_intervention("delete_everything")
    with pytest.raises(ForkError, match="needs an argument"):
        parse_intervention("force_read")


def arag_agent(request):
    """keyword_search -> read_chunk c1 -> semantic_search -> read_chunk c2 -> a plain answer."""
    tools = sum(1 for m in request.messages if m["role"] == "tool")
    script = [("keyword_search", {"keywords": ["North", "Star"]}), ("read_chunk", {"chunk_id": "c1"}),
              ("semantic_search", {"query": "Douglass married"}), ("read_chunk", {"chunk_id": "c2"})]
    if tools < len(script):
        return reply_tool_call(*script[tools])
    return "Helen Pitts Douglass"


def register_agent(request):
    """ExecutionRAG: a two-item register, updates that resolve R1 then R2, agent turns, an answer."""
    body = request.body
    prompt = "\n".join(str(m.get("content") or "") for m in request.messages)
    if "response_format" in body:
        return register_reply(body, prompt, r2_found="c2" in prompt)
    if body.get("tools"):
        tools = sum(1 for m in request.messages if m["role"] == "tool")
        script = [("keyword_search", {"keywords": ["Douglass", "married"]}), ("read_chunk", {"chunk_id": "c2"})]
        return reply_tool_call(*script[tools]) if tools < len(script) else "done"
    return "Helen Pitts Douglass"


def hasty_agent(request):
    """search -> final without reading; after a rejection read c4, then answer."""
    tools = sum(1 for m in request.messages if m["role"] == "tool")
    if "Action Rejected" in (request.messages[-1].get("content") or ""):
        return reply_tool_call("read", {"chunk_id": "c4"})
    if tools == 0:
        return reply_tool_call("search", {"query": "North Star publisher"})
    return reply_tool_call("final", {"answer": "Helen Pitts Douglass"})


def same(step):
    """A step as an identity fork must reproduce it: a live call's latency differs."""
    data = comparable(step)
    data.pop("latency_ms")
    return data


CONTROLLER_CASES = [
    ("read_gate", "baseline", agent, 1),
    ("read_gate", "read_gate", hasty_agent, 2),
    ("read_gate", "context_injection", agent, 2),
    ("read_gate", "lowev", hasty_agent, 2),
    ("arag", "baseline", arag_agent, 3),
    ("execution_rag", "register", register_agent, 4),
    ("execution_rag", "composed", register_agent, None),  # its first register update
]


@pytest.mark.parametrize(("controller", "condition", "responder", "k"), CONTROLLER_CASES)
def test_an_identity_fork_of_each_controller_rebuilds_its_state_exactly(tmp_path, controller, condition,
                                                                        responder, k):
    # Swapping to a second server that answers exactly as the first: if the fork rebuilt the messages,
    # the environment and the register exactly, the child is the parent step for step and event for event.
    with mock_server(responder) as server, mock_server(responder) as twin:
        (parent,) = run_parent(server, tmp_path, controller, condition, questions=QUESTIONS[:1])
        if k is None:
            k = next(i for i, s in enumerate(parent.steps) if getattr(s, "phase", None) == "update")
        assert 0 < k < len(parent.steps) - 1
        before = len(server.chat_requests)
        summary, children = fork(server, tmp_path, [parent], str(k), f"swap_model:{twin.model_spec}")
        assert not summary.skipped, summary.skipped
        (child,) = children
        assert len(server.chat_requests) == before  # prefix from the cache, the rest from the twin
        parent_requests = server.chat_requests[:before]
        # The twin saw exactly the parent's requests from the fork step on.
        assert [r.messages for r in twin.chat_requests] == [r.messages for r in parent_requests[-len(
            twin.chat_requests):]]
    assert child.fork.prefix_model_calls == 0
    assert [comparable(s) for s in child.steps[:k]] == [comparable(s) for s in parent.steps[:k]]
    assert [same(s) for s in child.steps] == [same(s) for s in parent.steps]
    assert child.register_events == parent.register_events
    assert child.final_answer == parent.final_answer and child.end_reason == parent.end_reason
    state = child.metadata["fork_state"]
    shown = {c.chunk_id for s in parent.steps[:k] if isinstance(s, SearchStep) for c in s.candidates}
    read = {p.chunk_id for s in parent.steps[:k] if isinstance(s, ReadStep) for p in s.passages}
    assert set(state["read_ids"]) == read and set(state["visited_ids"]) == shown | read
    assert state["search_count"] == sum(isinstance(s, SearchStep) for s in parent.steps[:k])
    if controller == "execution_rag":
        assert state["register_events"] == sum(1 for e in parent.register_events if e.step_index < k)
