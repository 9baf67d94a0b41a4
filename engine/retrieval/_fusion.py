"""Reciprocal Rank Fusion and the hybrid (BM25 + dense) retriever built on it."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from trajscope.format import RetrieverSettings

from ._bm25 import BM25Retriever
from ._dense import DenseRetriever
from ._hit import Hit, hits_at

DEFAULT_RRF_K = 60


def reciprocal_rank_fusion(rankings: Sequence[Sequence[str]], k: int = DEFAULT_RRF_K) -> list[tuple[str, float]]:
    """Fuse ranked id lists: score(d) = sum over lists of 1 / (k + rank of d), rank 1-based.

    Ties are broken by the best rank any list gave the id, then by the id, so the order is
    deterministic.
    """
    scores: dict[str, float] = {}
    best_rank: dict[str, int] = {}
    for ranking in rankings:
        for rank, chunk_id in enumerate(ranking, start=1):
            scores[chunk_id] = scores.get(chunk_id, 0.0) + 1.0 / (k + rank)
            best_rank[chunk_id] = min(best_rank.get(chunk_id, rank), rank)
    order = sorted(scores, key=lambda c: (-scores[c], best_rank[c], c))
    return [(c, scores[c]) for c in order]


class HybridRetriever:
    """BM25 and dense rankings (each `depth` deep) fused by RRF; Hit.score is the fused score."""

    name = "hybrid"

    def __init__(self, bm25: BM25Retriever, dense: DenseRetriever, rrf_k: int = DEFAULT_RRF_K, *,
                 top_k: int = 5, depth: int = 50):
        if bm25.chunk_ids != dense.chunk_ids:
            raise ValueError("BM25 and dense retrievers must index the same chunks in the same order")
        self.bm25, self.dense = bm25, dense
        self.rrf_k, self.top_k, self.depth = rrf_k, top_k, depth

    @property
    def chunk_ids(self) -> list[str]:
        return self.bm25.chunk_ids

    def search(self, query: str, k: int | None = None) -> list[Hit]:
        return self.search_batch([query], k)[0]

    def search_batch(self, queries: list[str], k: int | None = None) -> list[list[Hit]]:
        k = k or self.top_k
        depth = max(self.depth, k)
        # Rankings carry corpus rows only: snippets are built for the k fused hits, not for 2 x depth.
        lexical = [self.bm25.rank(q, depth) for q in queries]
        semantic = self.dense.rank_batch(queries, depth)
        return [self._fuse(a, b, k) for (a, _), (b, _) in zip(lexical, semantic, strict=False)]

    def _fuse(self, lexical: np.ndarray, semantic: np.ndarray, k: int) -> list[Hit]:
        chunks = self.bm25.corpus.chunks
        fused = reciprocal_rank_fusion([[chunks[r].chunk_id for r in lexical], [chunks[r].chunk_id for r in semantic]],
                                       self.rrf_k)[:k]
        position = self.bm25.corpus.position
        return hits_at(self.bm25.corpus, [position[c] for c, _ in fused], [s for _, s in fused], self.name,
                       self.bm25.snippet_chars)

    def settings(self) -> RetrieverSettings:
        return RetrieverSettings(kind=self.name, top_k=self.top_k, rrf_k=self.rrf_k,
                                 embedding_model=self.dense.model, bm25_k1=self.bm25.k1, bm25_b=self.bm25.b)
