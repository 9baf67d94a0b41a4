"""ExecutionRAG's default variant against the scripted mock server: the tool-using agent the register guides."""
from __future__ import annotations

import json
from typing import Any

import pytest
from test_controllers_register import R1, R2, RegisterModel
from test_controllers_support import CORPUS, QUESTION, RoutedRetriever, kinds, mock_server, run_controller

from trajscope.engine.controllers import get_controller
from trajscope.engine.mock_llm import reply_json, reply_malformed, reply_text, reply_tool_call
from trajscope.engine.prompts import load_prompt, render_prompt
from trajscope.format import BudgetNudgeStep, ErrorStep, FinalStep, ForcedAnswerStep, RegisterUpdateStep

RESOLVE_R1 = {"updates": [{"id": "R1", "status": "resolved", "note": "Frederick Douglass published it",
                           "supporting_chunk_ids": ["c1"]}]}
RESOLVE_R2 = {"updates": [{"id": "R2", "status": "resolved", "note": "he married Helen Pitts",
                           "supporting_chunk_ids": ["c2"]}]}


class AgentModel(RegisterModel):
    """Scripted model: agent turns (system prompt first) follow the agent script; the rest as RegisterModel."""

    def __init__(self, agent: list[Any], updates: list[dict[str, Any]], *, items: list[str] = (R1, R2),
                 answer: str = "Helen Pitts Douglass", json_answers: bool = False):
        super().__init__(list(items), updates, answer=answer, json_answers=json_answers)
        self.agent = list(agent)
        self.agent_requests: list[Any] = []

    def __call__(self, request: Any) -> Any:
        if request.messages and request.messages[0]["role"] == "system":
            self.agent_requests.append(request)
            return self.agent.pop(0)
        return super().__call__(request)


def routes(table: dict[str, list[str]], seed: list[str]):
    """The seed's results for the bare question; else those of the first key the query contains."""
    def route(query: str) -> list[str]:
        if query == QUESTION.text:
            return seed
        return next((ids for key, ids in table.items() if key in query), [])
    return route


ROUTES = routes({"publisher": ["c1", "c3"], "married": ["c2", "c4"], "nothing": []}, seed=["c7"])


def run_agent(model: AgentModel, condition: str = "register", protocol: str = "tools", route=ROUTES, **params):
    with mock_server(model) as server:
        traj = run_controller(get_controller("execution_rag", condition, **params), server, protocol=protocol,
                              retriever=RoutedRetriever(CORPUS, route))
        bodies = [r.body for r in server.chat_requests]
    return traj, bodies


def user_texts(request: Any) -> list[str]:
    return [m["content"] for m in request.messages if m["role"] == "user"]


def test_the_agent_issues_its_own_tool_calls_and_the_answer_is_composed_from_the_register():
    model = AgentModel([
        reply_tool_call("semantic_search", {"query": "publisher of The North Star"}),
        reply_tool_call("keyword_search", {"keywords": ["Douglass", "married"]}),
        reply_tool_call("read_chunk", {"chunk_id": "c2"}),
        reply_tool_call("final", {"answer": "Helen Pitts"}),
    ], [RESOLVE_R1, {"updates": []}])
    traj, bodies = run_agent(model)
    assert kinds(traj) == [
        "semantic_search", "read", "register_update",                           # warm-up: seed, S_0
        "semantic_search", "register_update", "register_update", "register_update",  # update, select, delta
        "keyword_search", "register_update",                                   # update without change
        "read",                                                                # c2 already shown: no update
        "final",
    ]
    phases = [s.phase for s in traj.steps if isinstance(s, RegisterUpdateStep)]
    assert phases == ["init", "update", "select", "progress_delta", "update"]
    assert traj.steps[3].tool_name == "semantic_search"
    assert traj.steps[3].args == {"query": "publisher of The North Star"}
    assert traj.steps[9].tool_name == "read_chunk"
    # The agent's tools are A-RAG's; the update prompt saw only chunks never shown before (ΔC_t).
    tools = [t["function"]["name"] for t in model.agent_requests[0].body["tools"]]
    assert tools == ["keyword_search", "semantic_search", "read_chunk", "final"]
    assert len(model.update_prompts) == 2 and "[c3]" in model.update_prompts[0] and "[c1]" in model.update_prompts[0]
    assert "[c4]" in model.update_prompts[1] and "[c1]" not in model.update_prompts[1]
    # G(q, S): the answer comes from the register; the agent's own reply is kept on the final step.
    final = traj.steps[-1]
    assert isinstance(final, FinalStep) and final.answer == "Helen Pitts Douglass"
    assert final.args["agent_answer"] == "Helen Pitts" and traj.end_reason == "final"
    assert f"R1 [resolved] {R1} | note: Frederick Douglass published it | evidence: c1" in model.answer_prompts[0]
    assert traj.metadata["variant"] == "agent" and traj.metadata["loops"] == 4
    events = [(e.item_id, e.from_status, e.to_status) for e in traj.register_events]
    assert events == [("R1", None, "active"), ("R2", None, "pending"), ("R1", "active", "resolved"),
                      ("R2", "pending", "active")]


def test_the_register_is_injected_after_warm_up_and_a_progress_delta_follows_a_status_change():
    model = AgentModel([
        reply_tool_call("semantic_search", {"query": "publisher of The North Star"}),
        reply_tool_call("semantic_search", {"query": "nothing new here"}),
        reply_text("Helen Pitts"),
    ], [RESOLVE_R1])
    traj, _ = run_agent(model)
    first, second, third = model.agent_requests
    # Warm-up (seed retrieval and S_0) happens before the agent's first call, which sees the register.
    assert [m["role"] for m in first.messages] == ["system", "user", "user"]
    assert first.messages[1]["content"] == render_prompt("question", question=QUESTION.text)
    injected = first.messages[2]["content"]
    assert injected.startswith("[Register]") and R1 in injected and R2 in injected
    assert first.index > 0  # the init prompt came first
    # After the status change the next agent call sees the [Progress] delta, after the tool observation.
    assert [m["role"] for m in second.messages][-2:] == ["tool", "user"]
    delta = second.messages[-1]["content"]
    assert delta.startswith("[Progress] R1 resolved: Frederick Douglass published it.") and "R2 active" in delta
    assert delta.endswith(f"Still open: R2 {R2}.")
    # A loop that brings nothing new changes nothing: no second delta.
    assert sum(t.startswith("[Progress]") for t in user_texts(third)) == 1
    assert traj.steps[-1].args["agent_answer"] == "Helen Pitts"


def test_the_agent_may_stop_calling_tools_once_the_register_is_clear():
    model = AgentModel([
        reply_tool_call("semantic_search", {"query": "publisher of The North Star"}),
        reply_tool_call("keyword_search", {"keywords": ["Douglass", "married"]}),
    ], [RESOLVE_R1, RESOLVE_R2])
    traj, _ = run_agent(model)
    assert len(model.agent_requests) == 2  # ReadyToAnswer after loop 2: no third agent call
    assert traj.end_reason == "final" and traj.final_answer == "Helen Pitts Douglass"
    assert "agent_answer" not in traj.steps[-1].args
    assert [e.to_status for e in traj.register_events if e.item_id == "R2"] == ["pending", "active", "resolved"]


def test_budget_nudge_on_every_loop_from_80_percent_then_the_forced_answer_from_the_register():
    model = AgentModel([reply_tool_call("semantic_search", {"query": f"nothing {i}"}) for i in range(5)], [],
                       answer="Frederick Douglass, uncertain")
    traj, bodies = run_agent(model, max_loops=5)
    nudges = [s for s in traj.steps if isinstance(s, BudgetNudgeStep)]
    assert [n.args["loop"] for n in nudges] == [4, 5]  # ⌈0.8·5⌉ = 4
    assert nudges[0].message == render_prompt("budget_nudge", used=4, budget=5)
    assert nudges[0].message in user_texts(model.agent_requests[4])
    assert not any(t.startswith("[Budget]") for t in user_texts(model.agent_requests[3]))
    assert len(model.agent_requests) == 5
    forced = traj.steps[-1]
    assert isinstance(forced, ForcedAnswerStep) and traj.end_reason == "loop_cap"
    assert forced.observation == load_prompt("force_final_answer")
    assert load_prompt("force_final_answer") in model.answer_prompts[0] and "[R1]" not in forced.observation
    assert "tools" not in bodies[-1]  # the forced answer is not an agent turn: no tools offered
    assert traj.metadata["forced_at_turn"] == 5


def test_the_context_budget_counts_the_prompt_tokens_the_model_saw():
    # Every mock reply reports 100 prompt tokens: init 100, agent turns 200, 300 > 250 ends the loop.
    model = AgentModel([reply_tool_call("semantic_search", {"query": f"nothing {i}"}) for i in range(15)], [],
                       answer="unknown")
    traj, bodies = run_agent(model, context_token_budget=250)
    assert len(model.agent_requests) == 2 and traj.end_reason == "context_budget"
    assert traj.metadata["context_tokens_seen"] == 100 * len(bodies)
    assert all(b["max_tokens"] == 16_384 for b in bodies)


def test_json_protocol_actions_drive_the_same_agent():
    model = AgentModel([
        reply_json({"action": "semantic_search", "arguments": {"query": "publisher of The North Star"}}),
        reply_json({"action": "final", "arguments": {"answer": "Helen Pitts"}}),
    ], [RESOLVE_R1], json_answers=True)
    traj, bodies = run_agent(model, protocol="json")
    assert all("response_format" in b for b in bodies)
    assert "semantic_search" in json.dumps(model.agent_requests[0].body["response_format"])
    assert kinds(traj)[3] == "semantic_search" and traj.steps[3].tool_name == "semantic_search"
    assert traj.final_answer == "Helen Pitts Douglass" and traj.steps[-1].args["agent_answer"] == "Helen Pitts"


def test_composed_variant_stays_selectable_and_issues_its_own_queries():
    model = AgentModel([], [RESOLVE_R1, RESOLVE_R2])
    traj, _ = run_agent(model, "composed",
                        route=routes({R1: ["c1", "c3"], R2: ["c2", "c4"]}, seed=["c7"]))
    assert model.agent_requests == [] and traj.metadata["variant"] == "composed"
    assert traj.final_answer == "Helen Pitts Douglass"


FALSE_R2 = {"updates": [{"id": "R2", "status": "resolved", "note": "the publisher's second wife",
                         "supporting_chunk_ids": ["c4"]}]}
AGENT_LABEL_CASES = {
    # qid: (items, agent turns, updates, answer, expected (label, reasoning_subtype), expected items)
    # R2 resolved on c4 (not gold) while its gold passage c2 was never retrieved: false resolution.
    "e_agent_false_resolution": (
        [R1, R2], [("semantic_search", {"query": "publisher of The North Star"}),
                   ("keyword_search", {"keywords": ["second", "wife"]})],
        [RESOLVE_R1, FALSE_R2], "Anna Murray", ("reasoning_error", "false_resolution"),
        [("R1", "resolved", False), ("R2", "resolved", True)]),
    # One item, resolved on its gold passage; the second hop's gold c2 was never retrieved and nothing
    # was falsely resolved: missing evidence, the paper's central category, reached by the agent.
    "e_agent_missing_evidence": (
        [R1], [("semantic_search", {"query": "publisher of The North Star"})],
        [RESOLVE_R1], "Anna Murray", ("missing_evidence", None), [("R1", "resolved", False)]),
}


@pytest.mark.parametrize("qid", list(AGENT_LABEL_CASES))
def test_execution_rag_taxonomy_labels_through_the_agent_variant(tmp_path, qid):
    from test_labels_from_controller_runs import _llm_judge_pass, _question

    from trajscope.warehouse import ingest_trajectories, open_warehouse

    items, turns, updates, answer, expected, expected_items = AGENT_LABEL_CASES[qid]
    model = AgentModel([reply_tool_call(name, args) for name, args in turns], updates, items=items, answer=answer)
    route = routes({"publisher": ["c1", "c3"], "wife": ["c4"]}, seed=["c7"])
    with mock_server(model) as server:
        traj = run_controller(get_controller("execution_rag"), server, question=_question(qid),
                              retriever=RoutedRetriever(CORPUS, route), run_id="erag_agent", dataset="musique")
    assert traj.metadata["variant"] == "agent" and traj.end_reason == "final"
    path = tmp_path / "wh.duckdb"
    ingest_trajectories(path, [traj])
    _llm_judge_pass(path, ["erag_agent"])
    with open_warehouse(path) as con:
        label = con.execute("SELECT label, reasoning_subtype FROM failure_erag").fetchone()
        rows = con.execute("SELECT item_id, status, false_resolution FROM register_item_resolution "
                           "ORDER BY item_id").fetchall()
    assert label == expected
    assert rows == expected_items


def test_ablation_switches_apply_to_the_agent_variant_too():
    model = AgentModel([reply_tool_call("semantic_search", {"query": "publisher of The North Star"}),
                        reply_text("Helen Pitts")], [RESOLVE_R1])
    traj, _ = run_agent(model, seed_init=False, iterative_updates=False)
    assert model.update_prompts == []  # never updated
    assert kinds(traj)[:2] == ["register_update", "semantic_search"]  # no seed retrieval before S_0
    assert traj.steps[0].args["seed_init"] is False and traj.final_answer == "Helen Pitts Douglass"


def test_a_malformed_agent_action_is_an_error_step_and_the_loop_goes_on():
    model = AgentModel([reply_malformed(), reply_json({"action": "final", "arguments": {"answer": "Helen"}})], [],
                       json_answers=True)
    traj, _ = run_agent(model, protocol="json")
    errors = [s for s in traj.steps if isinstance(s, ErrorStep)]
    assert [e.error_type for e in errors] == ["malformed_action"]
    assert len(model.agent_requests) == 2 and traj.metadata["invalid_actions"] == 1
    assert traj.end_reason == "final" and traj.steps[-1].args["agent_answer"] == "Helen"
