"""Every label of both taxonomies, reached by real controller runs against the loopback mock server,
ingested, judged (lexical scores and a mock LLM judge) and labelled by the warehouse views; and the
papers' worked examples (Read-Gate's Inception walk-through, ExecutionRAG's register Case 1)."""
from __future__ import annotations

import msgspec
import pytest
from test_controllers_register import R1, R2, RegisterModel, route_by_item
from test_controllers_support import CORPUS, QUESTION, RoutedRetriever, mock_server, run_controller

from trajscope.engine.controllers import get_controller
from trajscope.engine.judge_pass import judge_run
from trajscope.engine.judges import LLMJudge
from trajscope.engine.llm import ChatModel, ModelConfig
from trajscope.engine.mock_llm import MockLLMServer, reply_json, reply_text, reply_tool_call
from trajscope.format import Chunk, Question
from trajscope.warehouse import ingest_trajectories, open_warehouse

GOLDS = ["c1", "c2"]  # The North Star published by Douglass; Douglass married Helen Pitts


def _question(qid: str, *, golds: list[str] = GOLDS, text: str = QUESTION.text, gold: str = QUESTION.gold_answer,
              dataset: str = "musique") -> Question:
    return msgspec.structs.replace(QUESTION, question_id=qid, text=text, gold_answer=gold, dataset=dataset,
                                   gold_chunk_ids=golds, gold_match="given" if golds else None, hop_count=2)


def _routes(table: dict[str, list[str]]):
    return lambda query: table.get(query, [])


def _search(query: str):
    return reply_tool_call("search", {"query": query})


def _read(chunk_id: str):
    return reply_tool_call("read", {"chunk_id": chunk_id})


def _final(answer: str):
    return reply_tool_call("final", {"answer": answer})


def _scripted(replies):
    queue = list(replies)
    return lambda request: queue.pop(0)


# -- Read-Gate: one trajectory per label and discipline sub-type -------------------------------------------
RG_CASES = {
    # qid: (condition, routes, replies, expected (label, discipline_subtype))
    "rg_no_read": ("baseline", {"North Star publisher": ["c1", "c3"]},
                   [_search("North Star publisher"), _final("Anna Murray")], ("discipline", "no_read_final")),
    "rg_snippet_only": ("baseline", {"North Star wife": ["c6", "c3"]},
                        [_search("North Star wife"), _read("c3"), _final("Anna Murray Douglass")],
                        ("discipline", "snippet_only_final")),
    "rg_low_evidence": ("baseline", {"Douglass wife": ["c2"]},
                        [_search("Douglass wife"), _read("c2"), _final("Anna Murray")],
                        ("discipline", "low_evidence_final")),
    "rg_post_gold_read": ("read_gate", {"North Star publisher": ["c1"]},
                          [_search("North Star publisher"), _read("c1"), _final("Frances Ames")],
                          ("post_gold_read", None)),
    "rg_retrieval": ("read_gate", {"North Star writer": ["c3"]},
                     [_search("North Star writer"), _read("c3"), _final("Frances Ames")], ("retrieval", None)),
    "rg_ambiguity": ("read_gate", {"North Star people": ["c1", "c2", "c3"]},
                     [_search("North Star people"), _read("c3"), _final("Frances Ames")], ("ambiguity", None)),
}

# Read-Gate §"Walk one example through the method": chunk 1042 holds London's Olympic history.
INCEPTION_Q = "In what years did the birth city of the director of Inception host the Summer Olympic Games?"
INCEPTION = {
    "nolan": Chunk(chunk_id="nolan", title="Christopher Nolan",
                   text="Christopher Nolan, the director of Inception, was born in London and spent his early "
                        "life there."),
    "1042": Chunk(chunk_id="1042", title="London Olympics",
                  text="London, the birth city of the Inception director, hosted the Summer Olympic Games "
                       "in 1908, 1948 and 2012."),
}
INCEPTION_SEARCH = "Inception director birth city Summer Olympics"
INCEPTION_CASES = {
    # Under the voluntary policy the agent answers from the snippets: a no-read discipline failure.
    "inception_voluntary": ("baseline", [_search(INCEPTION_SEARCH), _final("1948")], ("discipline", "no_read_final")),
    # Read-Gate rejects that final, the agent reads 1042 and answers right: no failure at all.
    "inception_gated": ("read_gate", [_search(INCEPTION_SEARCH), _final("1948"), _read("1042"),
                                      _final("1908, 1948, 2012")], None),
    # "If it still fails, the error is cleanly reclassified into post-gold-read reasoning."
    "inception_gated_still_wrong": ("read_gate", [_search(INCEPTION_SEARCH), _final("1948"), _read("1042"),
                                                  _final("1948 and 2012")], ("post_gold_read", None)),
}

# -- ExecutionRAG: one trajectory per label and reasoning sub-type -----------------------------------------
BOTH = route_by_item({R1: ["c1", "c3"], R2: ["c2", "c4"]}, seed=["c1", "c7"])
RESOLVE_BOTH = [
    {"updates": [{"id": "R1", "status": "resolved", "note": "Frederick Douglass published it",
                  "supporting_chunk_ids": ["c1"]}]},
    {"updates": [{"id": "R2", "status": "resolved", "note": "he married Helen Pitts", "supporting_chunk_ids": ["c2"]}]},
]
ERAG_CASES = {
    # qid: (items, updates, answer, route, params, golds, expected (label, reasoning_subtype))
    # App. F Case 1 ("Preventing Entity Confusion"): the seed-grounded register anchors Douglass; success.
    "e_case1_success": ([R1, R2], RESOLVE_BOTH, "Helen Pitts Douglass", BOTH, {}, GOLDS, None),
    "e_judge_error": ([R1, R2], RESOLVE_BOTH, "Helen Pitts Douglass, probably", BOTH, {}, GOLDS, ("judge_error", None)),
    "e_gave_up_abstains": ([R1, R2], RESOLVE_BOTH, "I was unable to find the answer.", BOTH, {}, GOLDS,
                           ("gave_up", None)),
    # Forced at the context budget (ER App. B: Gave Up); one forced at the loop cap is not.
    "e_gave_up_budget": ([R1, R2], [{"updates": [{"id": "R1", "status": "active", "note": "still looking"}]}] * 2,
                         "Anna Murray", BOTH, {"max_loops": 2, "context_token_budget": 1}, GOLDS, ("gave_up", None)),
    "e_reasoning_all_gold": ([R1, R2], RESOLVE_BOTH, "Anna Murray Douglass", BOTH, {}, GOLDS,
                             ("reasoning_error", "all_gold_retrieved")),
    # R2 resolved on c4 (not gold) while its gold passage c2 was never retrieved.
    "e_false_resolution": ([R1, R2], [RESOLVE_BOTH[0], {"updates": [
        {"id": "R2", "status": "resolved", "note": "the publisher's second wife", "supporting_chunk_ids": ["c4"]}]}],
        "Anna Murray", route_by_item({R1: ["c1", "c3"], R2: ["c4"]}, seed=["c7"]), {}, GOLDS,
        ("reasoning_error", "false_resolution")),
    # A one-item register, properly resolved on its gold passage; the second hop's gold passage c2 was
    # never retrieved and no item was falsely resolved: missing evidence, reachable for ExecutionRAG.
    "e_missing_evidence": ([R1], RESOLVE_BOTH[:1], "Anna Murray", route_by_item({R1: ["c1", "c3"]}, seed=["c1", "c7"]),
                           {}, GOLDS, ("missing_evidence", None)),
    "e_no_gold_evidence": ([R1, R2], RESOLVE_BOTH, "Anna Murray", BOTH, {}, [], ("no_gold_evidence", None)),
}


def _judge_reply(request):
    # Equivalent iff the gold answer is in the prediction and the prediction does not hedge.
    text = request.text()
    gold = text.split("Gold answer: ")[1].split("\n")[0].lower()
    prediction = text.split("Predicted answer: ")[1].split("\n")[0].lower()
    return reply_json({"equivalent": gold in prediction and "probably" not in prediction, "rationale": "mock"})


def _llm_judge_pass(path, run_ids):
    with MockLLMServer(_judge_reply) as server:
        for run_id in run_ids:
            config = ModelConfig(name="mock-judge", base_url=server.base_url, api_key="mock-key", max_retries=0,
                                 timeout_s=10.0, temperature=0.0, prices={"mock-judge": (0.0, 0.0)})
            report = judge_run(path, run_id, llm_judge=LLMJudge(ChatModel(config)))
            assert report.llm_failed == 0 and not report.errors


@pytest.fixture(scope="module")
def labelled(tmp_path_factory):
    trajectories = []
    for qid, (condition, routes, replies, _) in RG_CASES.items():
        with mock_server(_scripted(replies)) as server:
            trajectories.append(run_controller(
                get_controller("read_gate", condition), server, question=_question(qid, dataset="hotpotqa"),
                retriever=RoutedRetriever(CORPUS, _routes(routes)), run_id=f"rg_{condition}", dataset="hotpotqa"))
    for qid, (condition, replies, _) in INCEPTION_CASES.items():
        question = _question(qid, text=INCEPTION_Q, gold="1908, 1948, 2012", golds=["nolan", "1042"],
                             dataset="hotpotqa")
        with mock_server(_scripted(replies)) as server:
            trajectories.append(run_controller(
                get_controller("read_gate", condition), server, question=question, corpus=INCEPTION,
                retriever=RoutedRetriever(INCEPTION, _routes({INCEPTION_SEARCH: ["nolan", "1042"]})),
                run_id=f"rg_{condition}", dataset="hotpotqa"))
    for qid, (items, updates, answer, route, params, golds, _) in ERAG_CASES.items():
        with mock_server(RegisterModel(items, updates, answer=answer)) as server:
            trajectories.append(run_controller(
                get_controller("execution_rag", "composed", **params), server, question=_question(qid, golds=golds),
                retriever=RoutedRetriever(CORPUS, route), run_id="erag", dataset="musique"))
    assert all(t.end_reason != "error" for t in trajectories), [t.error for t in trajectories]
    path = tmp_path_factory.mktemp("labels") / "wh.duckdb"
    ingest_trajectories(path, trajectories)
    _llm_judge_pass(path, sorted({t.run.run_id for t in trajectories}))
    with open_warehouse(path) as con:
        rg = {r[0]: (r[1], r[2]) for r in con.execute(
            "SELECT question_id, label, discipline_subtype FROM failure_rg WHERE extractor = 'regex'").fetchall()}
        erag = {r[0]: (r[1], r[2]) for r in con.execute(
            "SELECT question_id, label, reasoning_subtype FROM failure_erag WHERE run_id = 'erag'").fetchall()}
        correct = {r[0]: r[1]
                   for r in con.execute("SELECT question_id, correct FROM trajectory_correctness").fetchall()}
        items = con.execute("""SELECT t.question_id, i.item_id, i.status, i.n_gold_cited, i.false_resolution
                               FROM register_item_resolution i JOIN trajectories t USING (trajectory_id)
                               WHERE t.question_id IN ('e_false_resolution', 'e_missing_evidence')
                               ORDER BY 1, 2""").fetchall()
    return rg, erag, correct, items


@pytest.mark.parametrize("qid", list(RG_CASES))
def test_every_read_gate_label_from_a_read_gate_controller_run(labelled, qid):
    rg, *_ = labelled
    assert rg[qid] == RG_CASES[qid][3]


def test_read_gate_covers_its_whole_taxonomy():
    labels = {expected for *_, expected in RG_CASES.values()}
    assert {label for label, _ in labels} == {"discipline", "post_gold_read", "retrieval", "ambiguity"}
    assert {sub for _, sub in labels} - {None} == {"no_read_final", "snippet_only_final", "low_evidence_final"}


@pytest.mark.parametrize("qid", list(INCEPTION_CASES))
def test_inception_walk_through_gets_the_papers_labels(labelled, qid):
    rg, _, correct, _ = labelled
    expected = INCEPTION_CASES[qid][2]
    if expected is None:
        assert correct[qid] is True and qid not in rg
    else:
        assert correct[qid] is False and rg[qid] == expected


@pytest.mark.parametrize("qid", list(ERAG_CASES))
def test_every_execution_rag_label_from_an_execution_rag_controller_run(labelled, qid):
    _, erag, correct, _ = labelled
    expected = ERAG_CASES[qid][-1]
    if expected is None:
        assert correct[qid] is True and qid not in erag
    else:
        assert erag[qid] == expected


def test_execution_rag_covers_its_whole_taxonomy():
    labels = {case[-1] for case in ERAG_CASES.values()} - {None}
    assert {label for label, _ in labels} == {"judge_error", "gave_up", "reasoning_error", "missing_evidence",
                                             "no_gold_evidence"}
    assert {sub for _, sub in labels} - {None} == {"all_gold_retrieved", "false_resolution"}


def test_arag_in_register_case1_latches_onto_nell_and_fails_on_missing_evidence(tmp_path):
    # App. F Case 1: "A-RAG instead latches onto William Cooper Nell ... and continues retrieval along the
    # wrong branch". Without a register it has no resolution event, so the failure is missing evidence.
    replies = [reply_tool_call("semantic_search", {"query": "publisher of The North Star"}),
               reply_tool_call("read_chunk", {"chunk_id": "c3"}),
               reply_tool_call("semantic_search", {"query": "William Cooper Nell married"}),
               reply_text("Frances Ames")]
    routes = {"publisher of The North Star": ["c3", "c1"], "William Cooper Nell married": ["c3"]}
    with mock_server(_scripted(replies)) as server:
        traj = run_controller(get_controller("arag", "baseline"), server, question=_question("e_case1_arag"),
                              retriever=RoutedRetriever(CORPUS, _routes(routes)), run_id="arag", dataset="musique")
    path = tmp_path / "wh.duckdb"
    ingest_trajectories(path, [traj])
    _llm_judge_pass(path, ["arag"])
    with open_warehouse(path) as con:
        row = con.execute("SELECT label, false_resolution, hop_evidence_recall FROM failure_erag").fetchone()
    assert row == ("missing_evidence", None, 0.5)


def test_register_items_are_judged_one_by_one(labelled):
    # R2 of e_false_resolution is resolved on c4, not gold: it alone is falsely resolved. The
    # one-item register of e_missing_evidence cites its gold passage c1: no false resolution.
    *_, items = labelled
    assert items == [("e_false_resolution", "R1", "resolved", 1, False),
                     ("e_false_resolution", "R2", "resolved", 0, True),
                     ("e_missing_evidence", "R1", "resolved", 1, False)]
