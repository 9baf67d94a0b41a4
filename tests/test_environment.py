"""The tool environment: observations, deduplication, counters, budgets, injection, never raising."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import jsonschema
import numpy as np
import pytest

from trajscope.engine.environment import ToolEnvironment, estimate_tokens, normalised_query
from trajscope.engine.retrieval import BM25Retriever, DenseRetriever, HybridRetriever
from trajscope.format import (
    Chunk,
    ContextInjectionStep,
    ErrorStep,
    FinalStep,
    KeywordSearchStep,
    Question,
    ReadStep,
    Run,
    SearchStep,
    SemanticSearchStep,
    Trajectory,
    decode_trajectory,
    encode,
)

FIXTURE = Path("tests/fixtures/retrieval/corpus.json")
CHUNKS = [Chunk(**row) for row in json.loads(FIXTURE.read_text())]
CORPUS = {c.chunk_id: c for c in CHUNKS}
BM25 = BM25Retriever(CHUNKS, snippet_chars=80)  # shorter than every passage


class HashEncoder:
    """Deterministic bag-of-words hashing encoder (the environment does not care which encoder ranks)."""

    def encode(self, texts, **_: object) -> np.ndarray:
        out = np.zeros((len(texts), 64), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                out[row, int(hashlib.md5(word.encode()).hexdigest(), 16) % 64] += 1
        return out


def read_gate(**kw) -> ToolEnvironment:
    return ToolEnvironment(CORPUS, BM25, **kw)


def arag(**kw) -> ToolEnvironment:
    hybrid = HybridRetriever(BM25, DenseRetriever(CHUNKS, "hash", encoder=HashEncoder()))
    return ToolEnvironment(CORPUS, hybrid, toolset="arag", **kw)


def test_search_returns_candidates_with_snippets() -> None:
    env = read_gate()
    result = env.search("Who designed Marrow Bridge?")
    step = result.step
    assert isinstance(step, SearchStep) and type(step) is SearchStep
    assert step.tool_name == "search" and step.query == "Who designed Marrow Bridge?"
    assert step.args == {"query": "Who designed Marrow Bridge?"} and not step.deduplicated
    assert [c.rank for c in step.candidates] == list(range(1, len(step.candidates) + 1))
    assert step.candidates[0].chunk_id == "r01" and step.candidates[0].retriever == "bm25"
    snippet = step.candidates[0].snippet
    assert snippet.endswith("...") and CORPUS["r01"].text.startswith(snippet[:-3])
    assert step.tokens_in is None and step.latency_ms is None
    assert "r01 | Marrow Bridge" in result.text and "call read" in result.text
    assert step.observation == result.text and result.extra_steps == []
    assert env.search_count == 1 and env.read_count == 0 and env.turns == 1
    assert env.visited_ids == {c.chunk_id for c in step.candidates}


def test_top_k_limits_candidates() -> None:
    assert len(read_gate(top_k=2).search("Harrowgate harbour novel river").step.candidates) == 2


def test_repeated_query_answers_with_dedup_notice() -> None:
    env = read_gate()
    first = env.search("Marrow Bridge engineer")
    again = env.search("  marrow   BRIDGE engineer ")
    assert again.step.deduplicated and not first.step.deduplicated
    assert again.step.candidates == first.step.candidates
    assert "repeats the search of turn 1" in again.text and "r01" in again.text
    assert env.search_count == 2 and env.duplicate_search_count == 1
    assert not env.search("Marrow Bridge builder").step.deduplicated


def test_keyword_dedup_key_is_sorted_keywords() -> None:
    env = arag()
    first = env.keyword_search(["Quint", "engineer"])
    again = env.keyword_search("engineer quint")
    assert isinstance(again.step, KeywordSearchStep) and again.step.deduplicated
    assert again.step.candidates == first.step.candidates
    assert normalised_query("keyword_search", "B a  c") == "a b c"
    assert normalised_query("semantic_search", "B a  c") == "b a c"


def test_keyword_and_semantic_search_use_their_own_retrievers() -> None:
    env = arag()
    kw = env.keyword_search(["Lantern", "Prize"]).step
    sem = env.semantic_search("Lantern Prize").step
    assert isinstance(kw, KeywordSearchStep) and {c.retriever for c in kw.candidates} == {"bm25"}
    assert isinstance(sem, SemanticSearchStep) and {c.retriever for c in sem.candidates} == {"dense"}
    assert not sem.deduplicated  # a different tool is a different cache entry
    assert env.search_count == 2


def test_read_returns_full_passage_and_rereads_are_not_new() -> None:
    env = read_gate()
    first = env.read("r02")
    assert isinstance(first.step, ReadStep) and first.step.tool_name == "read"
    assert first.step.chunk_ids == ["r02"]
    assert [(p.chunk_id, p.text, p.is_new) for p in first.step.passages] == [("r02", CORPUS["r02"].text, True)]
    assert CORPUS["r02"].text in first.text
    again = env.read(["r02", "r03"])
    assert [(p.chunk_id, p.is_new) for p in again.step.passages] == [("r02", False), ("r03", True)]
    assert again.step.passages[0].text is None
    assert "already read at turn 1; it is not new evidence" in again.text and CORPUS["r03"].text in again.text
    assert env.read_count == 2 and env.read_ids == {"r02", "r03"}
    assert {"r02", "r03"} <= env.visited_ids


def test_arag_read_is_read_chunk() -> None:
    env = arag()
    step = env.read("r05").step
    assert isinstance(step, ReadStep) and step.tool_name == "read_chunk"
    assert env.call("read", {"chunk_id": "r05"}).step.error_type == "unknown_action"


def test_unknown_chunk_id_is_explained_not_raised() -> None:
    env = read_gate()
    result = env.read("r99")
    assert isinstance(result.step, ReadStep) and result.step.passages == []
    assert 'Unknown chunk id "r99"' in result.text
    assert env.read_count == 0 and env.read_ids == set()
    mixed = env.read("r01, r98")
    assert mixed.step.chunk_ids == ["r01", "r98"] and [p.chunk_id for p in mixed.step.passages] == ["r01"]
    assert 'Unknown chunk id "r98"' in mixed.text and env.read_count == 1


@pytest.mark.parametrize(
    ("action", "args", "needle"),
    [
        ("search", {}, "search: missing query; expected search(query)."),
        ("search", {"q": "x"}, "missing query; unexpected q"),
        ("search", {"query": 42}, "query must be a string, got int"),
        ("search", {"query": "   "}, "query is empty"),
        ("search", "just a string", "takes an object of named arguments, got str"),
        ("read", {"chunk_id": {"id": 1}}, "chunk_id must be a string or a list of strings"),
        ("final", {"answer": None}, "answer must be a string, got NoneType"),
    ],
)
def test_malformed_arguments_become_error_steps(action: str, args: object, needle: str) -> None:
    env = read_gate()
    result = env.call(action, args)  # type: ignore[arg-type]
    assert isinstance(result.step, ErrorStep) and result.step.error_type == "malformed_arguments"
    assert needle in result.text and result.step.message == result.text
    assert result.step.tool_name == action
    assert env.turns == 1 and env.search_count == 0 and env.read_count == 0 and not env.finished


def test_unknown_action_lists_the_tools() -> None:
    result = read_gate().call("lookup", {"query": "x"})
    assert isinstance(result.step, ErrorStep) and result.step.error_type == "unknown_action"
    assert "Available tools: search, read, final" in result.text
    assert read_gate().call(None, {}).step.error_type == "unknown_action"  # type: ignore[arg-type]


def test_retriever_failure_becomes_tool_error() -> None:
    class Broken:
        name = "bm25"

        def search(self, query, k=None):
            raise RuntimeError("index offline")

    result = ToolEnvironment(CORPUS, Broken()).search("anything")  # type: ignore[arg-type]
    assert result.step.error_type == "tool_error" and "index offline" in result.text


def test_final_records_answer_and_ends_the_episode() -> None:
    env = read_gate()
    result = env.final("Harrowgate")
    assert isinstance(result.step, FinalStep) and result.step.answer == "Harrowgate"
    assert env.finished
    after = env.search("more")
    assert after.step.error_type == "finished" and env.search_count == 0


def test_turn_cap_disables_tools_but_not_final() -> None:
    env = read_gate(max_turns=3)
    env.search("Esker")
    env.read("r04")
    assert not env.budget_exhausted and env.turns_left == 1
    env.search("Tell river")
    assert env.turn_cap_reached and env.budget_exhausted and env.turns_left == 0
    refused = env.read("r12")
    assert refused.step.error_type == "budget_exhausted" and "all 3 turns are used" in refused.text
    assert env.read_count == 1 and env.search_count == 2
    assert isinstance(env.final("Esker").step, FinalStep)


def test_context_token_budget() -> None:
    env = read_gate(context_token_budget=60)
    first = env.read("r01")
    assert env.context_tokens == estimate_tokens(first.text) > 0
    env.read("r02")
    assert env.token_budget_exceeded and env.budget_exhausted and not env.turn_cap_reached
    refused = env.search("anything")
    assert refused.step.error_type == "budget_exhausted" and "exceeds the budget of 60" in refused.text
    env2 = read_gate(context_token_budget=1000)
    env2.add_context_tokens(1001)
    assert env2.budget_exhausted


def test_estimate_tokens_is_words_times_1_3_rounded_up() -> None:
    assert estimate_tokens("") == 0 and estimate_tokens(None) == 0
    assert estimate_tokens("one two three") == 4  # ceil(3.9)
    assert estimate_tokens("a b c d e f g h i j") == 13


def test_context_injection_adds_a_separate_step() -> None:
    env = read_gate(inject_top_passage=True)
    result = env.search("Marrow Bridge")
    (inj,) = result.extra_steps
    assert isinstance(inj, ContextInjectionStep)
    assert [(p.chunk_id, p.text, p.is_new) for p in inj.passages] == [("r01", CORPUS["r01"].text, True)]
    assert result.text == result.step.observation + "\n\n" + inj.observation
    assert CORPUS["r01"].text in result.text and CORPUS["r01"].text not in result.step.observation
    assert env.read_count == 0 and env.read_ids == set()  # injection is not a read
    second = env.search("stone arch bridge Tell")
    assert second.extra_steps[0].passages[0].is_new is False  # r01 is already in context
    assert env.search("marrow bridge").extra_steps == []  # a deduplicated search injects nothing
    assert read_gate().search("Marrow Bridge").extra_steps == []


def test_steps_round_trip_through_the_canonical_format() -> None:
    env = read_gate(inject_top_passage=True)
    results = [env.search("Quint"), env.read("r02"), env.read("r02"), env.call("nope", {}), env.final("x")]
    steps = [s for r in results for s in [r.step, *r.extra_steps]]
    traj = Trajectory(trajectory_id="t", run=Run(run_id="r"), question=Question(question_id="q", text="?"),
                      steps=steps)
    assert decode_trajectory(encode(traj)) == traj


@pytest.mark.parametrize("toolset", ["read_gate", "arag"])
def test_tool_schemas_for_both_protocols(toolset: str) -> None:
    env = read_gate() if toolset == "read_gate" else arag()
    tools = env.tool_schemas("tools")
    names = [t["function"]["name"] for t in tools]
    assert names == (["search", "read", "final"] if toolset == "read_gate"
                     else ["keyword_search", "semantic_search", "read_chunk", "final"])
    for tool in tools:
        assert tool["type"] == "function"
        jsonschema.Draft202012Validator.check_schema(tool["function"]["parameters"])
    (schema,) = env.tool_schemas("json")
    validator = jsonschema.Draft202012Validator(schema)
    read_tool = "read" if toolset == "read_gate" else "read_chunk"
    assert validator.is_valid({"action": read_tool, "arguments": {"chunk_id": "r01"}})
    assert validator.is_valid({"action": "final", "arguments": {"answer": "x"}})
    assert not validator.is_valid({"action": "final", "arguments": {}})
    assert not validator.is_valid({"action": "lookup", "arguments": {"query": "x"}})
    assert not validator.is_valid({"action": "final", "arguments": {"answer": "x"}, "extra": 1})
    with pytest.raises(ValueError, match="unknown protocol"):
        env.tool_schemas("xml")  # type: ignore[arg-type]


def test_arag_needs_keyword_and_semantic_retrievers() -> None:
    with pytest.raises(ValueError, match="needs a retriever for semantic_search"):
        ToolEnvironment(CORPUS, BM25, toolset="arag")
    with pytest.raises(ValueError, match="unknown toolset"):
        ToolEnvironment(CORPUS, BM25, toolset="react")  # type: ignore[arg-type]
