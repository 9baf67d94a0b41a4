"""Retrieval over a chunk corpus: BM25 (rank-bm25 BM25Okapi scoring via bm25s), dense (FAISS), RRF hybrid."""
from ._bm25 import BM25Retriever, bm25_cache_key, okapi_idf
from ._build import RETRIEVER_KINDS, RetrieverKind, build_retriever, cached_bm25, cached_dense
from ._cache import default_cache_dir
from ._corpus import IndexedCorpus, index_corpus, indexed_text
from ._dense import DenseRetriever, dense_cache_key
from ._encoder import DEFAULT_EMBEDDING_MODEL, load_encoder
from ._fusion import DEFAULT_RRF_K, HybridRetriever, reciprocal_rank_fusion
from ._hit import DEFAULT_SNIPPET_CHARS, Hit, Retriever, make_snippet
from ._tokenize import STOPWORDS, tokenize

__all__ = [
    "DEFAULT_EMBEDDING_MODEL", "DEFAULT_RRF_K", "DEFAULT_SNIPPET_CHARS", "RETRIEVER_KINDS", "STOPWORDS",
    "BM25Retriever", "DenseRetriever", "Hit", "HybridRetriever", "IndexedCorpus", "Retriever",
    "RetrieverKind", "bm25_cache_key", "build_retriever", "cached_bm25", "cached_dense",
    "default_cache_dir", "dense_cache_key", "index_corpus", "indexed_text", "load_encoder",
    "make_snippet", "okapi_idf", "reciprocal_rank_fusion", "tokenize",
]
