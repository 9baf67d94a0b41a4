"""DSPy program traces: a saved program's bootstrapped demos (`augmented: true`), one trajectory per run
(`dspy_uuid`, else the question its demos share), its predictors in program order.

A predictor that writes a query (`search_query`, `query`) is a retrieval hop: its results are the passages the
next predictor's `context` gains ("Title | text", known by title). The predictor that writes `answer` answers.
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from trajscope.format import Candidate, Step, Trajectory

from ._actions import make_step
from ._context import ImportContext, assemble
from ._fields import Where, need_list, need_object
from ._json_stream import iter_whole_documents
from ._questions import text_question_id, title_id

DSPY_NOTES = {"read_action": "DSPy retrieval puts the passages straight into the context: there is no read step",
              "gold_passages": "a saved DSPy program carries no gold passages",
              "gold_answers": "gold only where a labelled demo asks the same question"}
_QUERY_KEYS = ("search_query", "query")
_THOUGHT_KEYS = ("rationale", "reasoning")


def _passages(demo: dict[str, Any], where: Where) -> list[str]:
    context = demo.get("context")
    if context is None:
        return []
    if isinstance(context, str):
        return [context]
    return [p if isinstance(p, str) else str(p) for p in need_list(context, where.at("context"))]


def _candidate(passage: str, rank: int) -> Candidate:
    title, sep, text = passage.partition(" | ")
    if not sep:
        return Candidate(chunk_id=title_id(passage.split("\n", 1)[0].strip()), rank=rank, snippet=passage)
    return Candidate(chunk_id=title_id(title.strip()), rank=rank, snippet=text)


def _trajectory(ctx: ImportContext, demos: list[tuple[str, dict[str, Any], Where]], gold: dict[str, str]) -> Trajectory:
    steps: list[Step] = []
    for k, (name, demo, at) in enumerate(demos):
        thought = next((demo[t] for t in _THOUGHT_KEYS if isinstance(demo.get(t), str)), None)
        query_key = next((q for q in _QUERY_KEYS if q in demo), None)
        if query_key is not None:
            query = demo[query_key]
            if not isinstance(query, str):
                raise at.error("expected a string query", query_key)
            seen = set(_passages(demo, at))
            after = _passages(demos[k + 1][1], demos[k + 1][2]) if k + 1 < len(demos) else []
            found = [p for p in after if p not in seen]
            steps.append(make_step("search", tool_name=name, args={"query": query}, query=query, thought=thought,
                                   candidates=[_candidate(p, i) for i, p in enumerate(found, start=1)],
                                   source_ref=f"predictor:{name}"))
        elif "answer" in demo:
            answer = demo["answer"]
            steps.append(make_step("final", tool_name=None, args={}, thought=thought,
                                   answer=answer if isinstance(answer, str) else str(answer),
                                   source_ref=f"predictor:{name}"))
    name, first, at = demos[0]
    text = first.get("question")
    if not isinstance(text, str) or not text.strip():
        raise at.error("bootstrapped demo without a question", "question")
    question = ctx.question(at, source_id=text_question_id(text), text=text, gold=gold.get(text))
    return assemble(ctx, run=ctx.run(), question=question, steps=steps,
                    metadata={"dspy_uuid": first.get("dspy_uuid"), "predictors": [n for n, _, _ in demos]})


def import_dspy(ctx: ImportContext) -> Iterator[Trajectory]:
    """One trajectory per bootstrapped run of a saved program (one JSON document, or JSONL of them)."""
    for line, doc in iter_whole_documents(ctx.path):
        where = ctx.where(line)
        doc = need_object(doc, where)
        runs: dict[str, list[tuple[str, dict[str, Any], Where]]] = {}
        gold: dict[str, str] = {}
        for name, state in doc.items():
            if not isinstance(state, dict) or "demos" not in state:
                continue
            for i, demo in enumerate(need_list(state["demos"], where.at(name).at("demos"))):
                at = where.at(name).at("demos").at(i)
                demo = need_object(demo, at)
                if not demo.get("augmented"):  # a labelled example: the gold of its question
                    if isinstance(demo.get("question"), str) and isinstance(demo.get("answer"), str):
                        gold.setdefault(demo["question"], demo["answer"])
                    continue
                # DSPy 2.4 links a run's demos by `dspy_uuid`; later versions only by the question they share.
                uuid = demo.get("dspy_uuid") or demo.get("question")
                if not isinstance(uuid, str) or not uuid.strip():
                    raise at.error("bootstrapped demo with neither its run id nor a question", "dspy_uuid")
                runs.setdefault(uuid, []).append((name, demo, at))
        for demos in runs.values():
            yield _trajectory(ctx, demos, gold)
