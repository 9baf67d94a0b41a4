"""build_retriever: construct a retriever, loading its indexes from the disk cache when present."""
from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

from trajscope.format import Chunk

from ._bm25 import BM25Retriever, bm25_cache_key
from ._cache import default_cache_dir, write_entry
from ._corpus import IndexedCorpus, as_indexed
from ._dense import DenseRetriever, dense_cache_key
from ._encoder import DEFAULT_EMBEDDING_MODEL
from ._fusion import DEFAULT_RRF_K, HybridRetriever
from ._hit import Retriever

log = logging.getLogger(__name__)

RetrieverKind = Literal["hybrid", "bm25", "dense"]
RETRIEVER_KINDS: tuple[str, ...] = ("hybrid", "bm25", "dense")


def cached_bm25(corpus: IndexedCorpus, cache_dir: Path, *, top_k: int = 5) -> BM25Retriever:
    """The BM25 retriever for corpus, from cache_dir/bm25 when a valid entry exists; else built and saved."""
    entry = cache_dir / "bm25" / bm25_cache_key(corpus)
    if entry.exists():
        try:
            return BM25Retriever.load(entry, corpus, top_k=top_k)
        except Exception as exc:  # any damage to a cache entry means: rebuild it
            log.warning("rebuilding damaged BM25 cache entry %s: %s", entry, exc)
    retriever = BM25Retriever(corpus, top_k=top_k)
    write_entry(entry, retriever.save)
    return retriever


def cached_dense(corpus: IndexedCorpus, cache_dir: Path, model: str = DEFAULT_EMBEDDING_MODEL, *,
                 top_k: int = 5, encoder: Any = None, query_backend: str | None = None,
                 query_threads: int | None = None) -> DenseRetriever:
    """The dense retriever for (model, corpus), from cache_dir/dense when valid; else embedded and saved.

    Queries are encoded per query_backend (see DenseRetriever); its ONNX export is cached in cache_dir/onnx.
    """
    entry = cache_dir / "dense" / dense_cache_key(corpus, model)
    options: dict[str, Any] = {"encoder": encoder, "top_k": top_k, "query_backend": query_backend,
                               "query_threads": query_threads, "cache_dir": cache_dir}
    if entry.exists():
        try:
            return DenseRetriever.load(entry, corpus, model, **options)
        except Exception as exc:  # any damage to a cache entry means: rebuild it
            log.warning("rebuilding damaged dense cache entry %s: %s", entry, exc)
    retriever = DenseRetriever(corpus, model, **options)
    write_entry(entry, retriever.save)
    return retriever


def build_retriever(
    chunks: IndexedCorpus | Iterable[Chunk] | Mapping[str, Chunk],
    kind: RetrieverKind = "hybrid",
    cache_dir: str | Path | None = None,
    embedding_model: str | None = None,
    top_k: int = 5,
    rrf_k: int = DEFAULT_RRF_K,
    *,
    encoder: Any = None,
    query_backend: str | None = None,
    query_threads: int | None = None,
) -> Retriever:
    """A BM25, dense or hybrid (RRF) retriever over chunks, with indexes cached on disk.

    cache_dir defaults to $TRAJSCOPE_CACHE or ~/.cache/trajscope; embedding_model to all-MiniLM-L6-v2.
    query_backend "auto" | "onnx" | "torch" (default $TRAJSCOPE_QUERY_BACKEND or "auto") picks the
    query encoder; query_threads its onnxruntime threads (default $TRAJSCOPE_QUERY_THREADS or 2).
    """
    if kind not in RETRIEVER_KINDS:
        raise ValueError(f"unknown retriever kind {kind!r}; choose one of {', '.join(RETRIEVER_KINDS)}")
    corpus = as_indexed(chunks)
    root = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()
    model = embedding_model or DEFAULT_EMBEDDING_MODEL
    if kind == "bm25":
        return cached_bm25(corpus, root, top_k=top_k)
    dense = cached_dense(corpus, root, model, top_k=top_k, encoder=encoder, query_backend=query_backend,
                         query_threads=query_threads)
    if kind == "dense":
        return dense
    return HybridRetriever(cached_bm25(corpus, root, top_k=top_k), dense, rrf_k, top_k=top_k)
