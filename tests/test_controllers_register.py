"""ExecutionRAG against the scripted mock server: register mechanics, invariants, deltas, nudge, budget."""
from __future__ import annotations

import json
import re
from typing import Any

from test_controllers_support import CORPUS, QUESTION, RoutedRetriever, kinds, mock_server, run_controller

from trajscope.engine.controllers import get_controller
from trajscope.engine.mock_llm import reply_json, reply_text
from trajscope.engine.prompts import load_prompt
from trajscope.format import (
    BudgetNudgeStep,
    Chunk,
    ErrorStep,
    FinalStep,
    ForcedAnswerStep,
    RegisterUpdateStep,
    SearchStep,
    SemanticSearchStep,
)

R1 = "Who published The North Star?"
R2 = "Whom did the publisher marry?"
R3 = "Where was the newspaper printed?"


class RegisterModel:
    """Scripted register model: answers the init, update and answer prompts; records what it was asked."""

    def __init__(self, items: list[str], updates: list[dict[str, Any]], answer: str = "Helen Pitts Douglass",
                 json_answers: bool = False):
        self.items, self.updates, self.answer, self.json_answers = items, list(updates), answer, json_answers
        self.update_prompts: list[str] = []
        self.answer_prompts: list[str] = []

    def __call__(self, request: Any) -> Any:
        text = request.text()
        if text.startswith("List the sub-questions"):
            return reply_json({"items": [{"sub_question": q} for q in self.items]})
        if text.startswith("You keep a register"):
            self.update_prompts.append(text)
            return reply_json(self.updates.pop(0) if self.updates else {"updates": []})
        self.answer_prompts.append(text)
        return reply_json({"answer": self.answer}) if self.json_answers else reply_text(self.answer)


def route_by_item(routes: dict[str, list[str]], seed: list[str]):
    """Results per sub-question found in the composed query; the seed's for the bare question."""
    def route(query: str) -> list[str]:
        for key, ids in routes.items():
            if key in query:
                return ids
        return seed
    return route


def events_of(traj):
    return [(e.item_id, e.from_status, e.to_status, e.step_index) for e in traj.register_events]


def test_register_resolves_items_one_by_one_and_answers_when_none_is_open():
    model = RegisterModel([R1, R2], [
        {"updates": [{"id": "R1", "status": "resolved", "note": "Frederick Douglass published it",
                      "supporting_chunk_ids": ["c1"], "reason": ""}]},
        {"updates": [{"id": "R2", "status": "resolved", "note": "he married Helen Pitts",
                      "supporting_chunk_ids": ["c2"]}]},
    ])
    retriever = RoutedRetriever(CORPUS, route_by_item({R1: ["c1", "c3"], R2: ["c2", "c4"]}, seed=["c1", "c7"]))
    with mock_server(model) as server:
        traj = run_controller(get_controller("execution_rag", "composed"), server, retriever=retriever)
    assert kinds(traj) == [
        "semantic_search", "read", "register_update",                       # seed, init
        "semantic_search", "read", "register_update", "register_update",    # loop 1: update, delta
        "register_update", "semantic_search", "read", "register_update", "register_update",  # loop 2
        "final",
    ]
    phases = [s.phase for s in traj.steps if isinstance(s, RegisterUpdateStep)]
    assert phases == ["init", "update", "progress_delta", "select", "update", "progress_delta"]
    assert events_of(traj) == [("R1", None, "active", 2), ("R2", None, "pending", 2),
                               ("R1", "active", "resolved", 5), ("R2", "pending", "active", 7),
                               ("R2", "active", "resolved", 10)]
    assert traj.register_events[2].supporting_chunk_ids == ["c1"]
    assert traj.register_events[2].note == "Frederick Douglass published it"
    # the query is composed from the item and the question; only unseen chunks are read and shown
    assert retriever.queries[1] == f"{R1} {QUESTION.text}"
    assert traj.steps[4].chunk_ids == ["c3"]
    assert CORPUS["c3"].text in model.update_prompts[0] and CORPUS["c7"].text not in model.update_prompts[0]
    # the answer is written from the register and its supporting passages
    assert CORPUS["c1"].text in model.answer_prompts[0] and CORPUS["c2"].text in model.answer_prompts[0]
    assert "[Progress] R2 resolved: he married Helen Pitts." in model.answer_prompts[0]
    assert traj.end_reason == "final" and traj.final_answer == "Helen Pitts Douglass"
    assert traj.steps[5].tokens_in == 100 and traj.steps[-1].tokens_in == 100


def test_invariants_hold_when_the_model_deletes_open_items_and_overwrites_evidence():
    model = RegisterModel([R1, R2, R3], [
        {"updates": [{"id": "R1", "status": "resolved", "note": "Douglass", "supporting_chunk_ids": ["c1"]}]},
        {"updates": [
            {"id": "R2", "status": "deleted", "note": "not needed"},
            {"id": "R3", "status": "retired", "reason": ""},
            {"id": "R1", "status": "resolved", "note": "Douglass", "supporting_chunk_ids": ["c2", "c99"]},
            {"id": "R7", "status": "resolved"},
        ]},
    ])
    retriever = RoutedRetriever(CORPUS, route_by_item({R1: ["c1"], R2: ["c2"], R3: ["c5"]}, seed=["c7"]))
    with mock_server(model) as server:
        traj = run_controller(get_controller("execution_rag", "composed", max_loops=2), server,
                              retriever=retriever)
    update = [s for s in traj.steps if isinstance(s, RegisterUpdateStep) and s.phase == "update"][1]
    violations = update.args["violations"]
    assert violations == [
        "R2: status 'deleted' is not allowed (items leave only through retired with a reason); kept active",
        "R3: retired without a reason; kept pending",
        "R1: unknown or unseen chunk ids dropped: c99",
        "R1: evidence is append-only; kept c1",
        "R7: no such item; proposal ignored",
    ]
    # R2 keeps its status (only its note changed); R3 is untouched; R1's evidence grew, never shrank
    assert update.observation.splitlines() == [
        f"R1 [resolved] {R1} | note: Douglass | evidence: c1, c2",
        f"R2 [active] {R2} | note: not needed",
        f"R3 [pending] {R3}",
    ]
    last = traj.register_events[-2:]
    assert [(e.item_id, e.from_status, e.to_status) for e in last] == [("R2", "active", "active"),
                                                                       ("R1", "resolved", "resolved")]
    assert last[1].supporting_chunk_ids == ["c1", "c2"]
    assert traj.metadata["invariant_violations"] == 5
    assert traj.end_reason == "loop_cap"  # two items still open at the budget


def test_retiring_with_a_reason_closes_an_item():
    model = RegisterModel([R1], [{"updates": [{"id": "R1", "status": "retired",
                                               "reason": "c3 shows Nell only wrote for the paper"}]}])
    retriever = RoutedRetriever(CORPUS, route_by_item({R1: ["c3"]}, seed=["c7"]))
    with mock_server(model) as server:
        traj = run_controller(get_controller("execution_rag", "composed"), server, retriever=retriever)
    retired = traj.register_events[-1]
    assert (retired.from_status, retired.to_status) == ("active", "retired")
    assert retired.reason == "c3 shows Nell only wrote for the paper"
    assert traj.end_reason == "final"  # no open item remains


def test_progress_delta_only_after_a_material_change():
    model = RegisterModel([R1], [
        {"updates": [{"id": "R1", "status": "active", "note": "publisher is Douglass; marriage missing"}]},
        # evidence only: not a material change, so no delta
        {"updates": [{"id": "R1", "status": "active", "note": "publisher is Douglass; marriage missing",
                      "supporting_chunk_ids": ["c2"]}]},
    ])
    retriever = RoutedRetriever(CORPUS, lambda q: ["c2", "c4"] if "marriage" in q
                                else (["c1"] if R1 in q else ["c7"]))
    with mock_server(model) as server:
        traj = run_controller(get_controller("execution_rag", "composed", max_loops=4), server,
                              retriever=retriever)
    deltas = [s for s in traj.steps if isinstance(s, RegisterUpdateStep) and s.phase == "progress_delta"]
    assert [d.args["loop"] for d in deltas] == [1]
    assert deltas[0].observation == (f"[Progress] R1 active: publisher is Douglass; marriage missing. "
                                     f"Still open: R1 {R1}.")
    assert len(model.update_prompts) == 2
    assert "[Progress]" in model.update_prompts[1]
    # loop 3 repeats loop 2's query: the environment dedups it; loop 4 falls back to keyword search,
    # which brings nothing new either; no update call is made for either
    searches = [(s.tool_name, s.deduplicated) for s in traj.steps if isinstance(s, SearchStep)]
    assert searches == [("semantic_search", False), ("semantic_search", False), ("semantic_search", False),
                        ("semantic_search", True), ("keyword_search", False)]


def test_budget_nudge_on_every_loop_from_80_percent_and_forced_bounded_answer_at_the_budget():
    filler = {f"x{i}": Chunk(chunk_id=f"x{i}", text=f"Filler passage {i}.") for i in range(20)}
    corpus = {**CORPUS, **filler}
    updates = [{"updates": [{"id": "R1", "status": "active", "note": f"step{k} still missing"}]} for k in range(1, 16)]
    model = RegisterModel([R1], updates, answer="unknown, probably Helen Pitts")

    def route(query: str) -> list[str]:
        m = re.search(r"step(\d+)", query)
        return [f"x{int(m.group(1)) + 1}"] if m else (["x1"] if R1 in query else ["x0"])

    with mock_server(model) as server:
        traj = run_controller(get_controller("execution_rag", "composed"), server,
                              retriever=RoutedRetriever(corpus, route), corpus=corpus)
    assert len(model.update_prompts) == 15
    nudges = [i for i, s in enumerate(traj.steps) if isinstance(s, BudgetNudgeStep)]
    # Algorithm 1 line 22: "if t >= 0.8B then inject budget-aware nudge", inside the loop.
    assert [traj.steps[i].args["loop"] for i in nudges] == [12, 13, 14, 15]
    loops_before_nudge = sum(isinstance(s, SemanticSearchStep) for s in traj.steps[:nudges[0]]) - 1  # minus seed
    assert loops_before_nudge == 12
    assert traj.steps[nudges[0]].message.startswith("[Budget] 12 of 15 retrieval loops used.")
    assert traj.steps[nudges[-1]].message.startswith("[Budget] 15 of 15 retrieval loops used.")
    assert all("[Budget]" not in p for p in model.update_prompts[:12])
    assert all(f"[Budget] {k} of 15" in model.update_prompts[k] for k in range(12, 15))
    deltas = [s.args["loop"] for s in traj.steps if isinstance(s, RegisterUpdateStep) and s.phase == "progress_delta"]
    assert deltas == list(range(1, 16))
    forced = traj.steps[-1]
    assert isinstance(forced, ForcedAnswerStep) and forced.answer == "unknown, probably Helen Pitts"
    assert load_prompt("force_final_answer") in model.answer_prompts[0]
    assert traj.end_reason == "loop_cap" and traj.metadata["loops"] == 15


def test_question_only_initialisation_skips_the_seed_retrieval():
    model = RegisterModel([R1], [{"updates": [{"id": "R1", "status": "resolved", "note": "Douglass",
                                               "supporting_chunk_ids": ["c1"]}]}])
    retriever = RoutedRetriever(CORPUS, route_by_item({R1: ["c1"]}, seed=["c7"]))
    with mock_server(model) as server:
        traj = run_controller(get_controller("execution_rag", "composed_question_only_init"), server,
                             retriever=retriever)
        init_prompt = server.chat_requests[0].messages[0]["content"]
    assert kinds(traj)[:2] == ["register_update", "semantic_search"]
    assert "Evidence:" not in init_prompt and QUESTION.text in init_prompt
    assert traj.steps[0].args["seed_init"] is False
    assert traj.end_reason == "final"


def test_no_updates_ablation_searches_each_item_once_and_never_updates():
    model = RegisterModel([R1, R2], [])
    retriever = RoutedRetriever(CORPUS, route_by_item({R1: ["c1"], R2: ["c2"]}, seed=["c7"]))
    with mock_server(model) as server:
        traj = run_controller(get_controller("execution_rag", "composed_no_updates"), server, retriever=retriever)
        n_requests = len(server.chat_requests)
    assert kinds(traj) == ["semantic_search", "read", "register_update", "semantic_search", "read",
                           "semantic_search", "read", "final"]
    assert n_requests == 2 and model.update_prompts == []
    assert [e.to_status for e in traj.register_events] == ["active", "pending"]
    assert all(CORPUS[c].text in model.answer_prompts[0] for c in ("c1", "c2", "c7"))
    assert traj.end_reason == "final"


def test_malformed_register_replies_are_recorded_and_survived():
    class Broken(RegisterModel):
        def __call__(self, request: Any) -> Any:
            text = request.text()
            if text.startswith("List the sub-questions"):
                return reply_text("sub-questions: who published it?")
            if text.startswith("You keep a register"):
                self.update_prompts.append(text)
                return reply_text("{not json")
            return super().__call__(request)

    model = Broken([], [], json_answers=True)
    retriever = RoutedRetriever(CORPUS, lambda q: ["c1"] if q != QUESTION.text else ["c7"])
    with mock_server(model) as server:
        traj = run_controller(get_controller("execution_rag", "composed", max_loops=3), server,
                              retriever=retriever, protocol="json")
    errors = [s for s in traj.steps if isinstance(s, ErrorStep)]
    assert [e.error_type for e in errors] == ["malformed_register_init", "malformed_register_update"]
    assert traj.register_events[0].sub_question == QUESTION.text  # the question is the fallback item
    assert errors[0].raw == "sub-questions: who published it?"
    assert traj.end_reason == "loop_cap" and traj.final_answer == "Helen Pitts Douglass"


def test_json_protocol_answers_through_the_answer_schema():
    model = RegisterModel([R1], [{"updates": [{"id": "R1", "status": "resolved", "note": "Douglass",
                                               "supporting_chunk_ids": ["c1"]}]}], json_answers=True)
    retriever = RoutedRetriever(CORPUS, route_by_item({R1: ["c1"]}, seed=["c7"]))
    with mock_server(model) as server:
        traj = run_controller(get_controller("execution_rag", "composed"), server, retriever=retriever,
                              protocol="json", temperature=0.7)
        bodies = [r.body for r in server.chat_requests]
    assert all("response_format" in b for b in bodies)
    assert bodies[-1]["response_format"]["json_schema"]["schema"]["required"] == ["answer"]
    # structured register calls run at temperature 0; the answer keeps the model's own setting
    assert [b["temperature"] for b in bodies] == [0.0, 0.0, 0.7]
    final = traj.steps[-1]
    assert isinstance(final, FinalStep) and final.answer == "Helen Pitts Douglass"
    assert json.loads(final.raw) == {"answer": "Helen Pitts Douglass"}


def test_context_budget_counts_the_prompts_the_model_saw_and_calls_carry_the_papers_decoding():
    # Every mock reply reports 100 prompt tokens: init + two updates = 300 > 250 ends the search.
    updates = [{"updates": [{"id": "R1", "status": "active", "note": f"step{k} still missing"}]} for k in range(1, 16)]
    model = RegisterModel([R1], updates, answer="unknown")
    filler = {f"x{i}": Chunk(chunk_id=f"x{i}", text=f"Filler passage {i}.") for i in range(20)}
    corpus = {**CORPUS, **filler}

    def route(query: str) -> list[str]:
        m = re.search(r"step(\d+)", query)
        return [f"x{int(m.group(1)) + 1}"] if m else (["x1"] if R1 in query else ["x0"])

    with mock_server(model) as server:
        traj = run_controller(get_controller("execution_rag", "composed", context_token_budget=250), server,
                              retriever=RoutedRetriever(corpus, route), corpus=corpus, temperature=None)
        bodies = [r.body for r in server.chat_requests]
    assert len(model.update_prompts) == 2 and traj.end_reason == "context_budget"
    assert traj.metadata["context_tokens_seen"] == 100 * len(bodies)
    assert all(b["max_tokens"] == 16_384 for b in bodies)
    structured = [b for b in bodies if "response_format" in b]
    assert structured and all(b["temperature"] == 0.0 for b in structured)
    assert all("temperature" not in b for b in bodies if "response_format" not in b)  # model default
