"""Retrieval over a chunk corpus: BM25 (rank-bm25 BM25Okapi scoring via bm25s), dense (FAISS), RRF hybrid;
dense queries are encoded through an ONNX export."""
from ._bm25 import BM25Retriever, bm25_cache_key, okapi_idf
from ._build import RETRIEVER_KINDS, RetrieverKind, build_retriever, cached_bm25, cached_dense
from ._cache import default_cache_dir
from ._corpus import IndexedCorpus, index_corpus, indexed_text
from ._dense import DenseRetriever, dense_cache_key
from ._encoder import DEFAULT_EMBEDDING_MODEL, load_encoder
from ._fusion import DEFAULT_RRF_K, HybridRetriever, reciprocal_rank_fusion
from ._hit import DEFAULT_SNIPPET_CHARS, Hit, Retriever, make_snippet
from ._onnx_encoder import OnnxEncoder
from ._onnx_export import MIN_COSINE, UnsupportedModel, export_onnx_encoder, probe_cosine
from ._query_encoder import (
    DEFAULT_QUERY_THREADS,
    QUERY_BACKENDS,
    QueryBackend,
    load_query_encoder,
    onnx_cache_entry,
    query_backend_setting,
    query_threads_for_load,
    usable_cores,
)
from ._tokenize import STOPWORDS, tokenize

__all__ = [
    "DEFAULT_EMBEDDING_MODEL", "DEFAULT_QUERY_THREADS", "DEFAULT_RRF_K", "DEFAULT_SNIPPET_CHARS", "MIN_COSINE",
    "QUERY_BACKENDS", "RETRIEVER_KINDS", "STOPWORDS",
    "BM25Retriever", "DenseRetriever", "Hit", "HybridRetriever", "IndexedCorpus", "OnnxEncoder", "QueryBackend",
    "Retriever", "RetrieverKind", "UnsupportedModel", "bm25_cache_key", "build_retriever", "cached_bm25",
    "cached_dense", "default_cache_dir", "dense_cache_key", "export_onnx_encoder", "index_corpus", "indexed_text",
    "load_encoder", "load_query_encoder", "make_snippet", "okapi_idf", "onnx_cache_entry", "probe_cosine",
    "query_backend_setting", "query_threads_for_load", "reciprocal_rank_fusion", "tokenize",
    "usable_cores",
]
