"""The demo audit's question choice: B1 from the retriever, both intervention strata filled."""
from __future__ import annotations

import pytest

from trajscope.engine.audit import AuditSpec, questions_by_b1_stratum, raw_context
from trajscope.engine.retrieval import build_retriever
from trajscope.ingest.datasets import load_dataset


@pytest.fixture(scope="module")
def demo():
    return load_dataset("demo")


def _b1_from_bm25(dataset, question, k: int) -> list:
    # Recomputed here with the retriever itself, not through the audit's passage source.
    chunks = {c.chunk_id: c for c in dataset.chunks}
    retriever = build_retriever(dataset.chunks, kind="bm25", top_k=k)
    return [chunks[h.chunk_id] for h in retriever.search(question.text, k)]


def test_retriever_b1_changes_the_audit_id_only_when_set():
    default = AuditSpec(dataset="demo")
    assert "b1_source" not in default.identity()  # existing audits keep their ids
    retrieved = AuditSpec(dataset="demo", b1_source="retriever")
    assert retrieved.identity()["b1_source"] == "retriever"
    assert retrieved.resolved_audit_id() != default.resolved_audit_id()
    with pytest.raises(ValueError, match="unknown b1_source 'web'"):
        AuditSpec(dataset="demo", b1_source="web")


def test_each_stratum_gets_its_questions_from_the_retrieval_alone(demo):
    spec = AuditSpec(dataset="demo", b1_source="retriever", top_k=5)
    ids = questions_by_b1_stratum(demo, spec, 2)
    assert len(ids) == 4 and ids == questions_by_b1_stratum(demo, spec, 2)  # deterministic
    by_id = {q.question_id: q for q in demo.questions}
    opens, missed = [], []
    for qid in ids:
        q = by_id[qid]
        passages = _b1_from_bm25(demo, q, 5)
        gold = q.gold_answer.lower()
        if gold in raw_context(passages).lower():
            opens.append(qid)
            # B1's top passage is the gold's own, and the question names it: a compile keeps it.
            assert gold in passages[0].title.lower() and gold in q.text.lower()
        else:
            missed.append(qid)
            assert not any(ch.isdigit() for ch in gold)  # a year a compile could produce by chance is avoided
    assert len(opens) == 2 and len(missed) == 2
    # The demo's own paragraphs always hold the gold: with them the insertion stratum would be empty.
    assert all(q.gold_answer.lower() in raw_context(
        [c for c in demo.chunks if c.chunk_id in set(demo.contexts[q.question_id])]).lower() for q in demo.questions)


def test_another_seed_picks_in_another_order(demo):
    first = questions_by_b1_stratum(demo, AuditSpec(dataset="demo", b1_source="retriever", top_k=5), 2)
    other = questions_by_b1_stratum(demo, AuditSpec(dataset="demo", b1_source="retriever", top_k=5, seed=1), 2)
    assert len(other) == 4 and other != first
