"""BM25 via bm25s, scored exactly as rank-bm25's BM25Okapi (Robertson IDF with an epsilon floor)."""
from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import bm25s
import numpy as np
import scipy.sparse as sp

from trajscope.format import Chunk, RetrieverSettings

from ._corpus import IndexedCorpus, as_indexed, indexed_text
from ._hit import DEFAULT_SNIPPET_CHARS, Hit, hits_at
from ._tokenize import TOKENIZER_VERSION, tokenize

# In the cache key: entries written before token ids were numbered by first appearance (their
# vocabulary followed the writer's string hash seed) are rebuilt, not loaded.
INDEX_VERSION = "first-seen-ids-1"


def okapi_idf(doc_freq: np.ndarray, n_docs: int, epsilon: float) -> np.ndarray:
    """rank-bm25 BM25Okapi IDF: log((N-df+0.5)/(df+0.5)); negatives become epsilon * mean IDF."""
    idf = np.log(n_docs - doc_freq + 0.5) - np.log(doc_freq + 0.5)
    # fsum: the exact sum, the same in any order of the vocabulary (a pairwise mean is not).
    floor = epsilon * math.fsum(idf.tolist()) / max(len(idf), 1)
    return np.where(idf < 0, floor, idf)


class _OkapiBM25(bm25s.BM25):
    """bm25s index whose precomputed score matrix holds BM25Okapi term weights.

    bm25s offers no variant with rank-bm25's epsilon-floored IDF ("robertson" clips the IDF at 0 and
    drops the (k1+1) factor), so the documented override point `build_index_from_ids` builds the
    sparse matrix here; querying, top-k and save/load stay bm25s's own.
    """

    def __init__(self, k1: float = 1.5, b: float = 0.75, epsilon: float = 0.25):
        super().__init__(k1=k1, b=b, method="atire", idf_method="atire", dtype="float64", backend="numpy")
        self.epsilon = epsilon

    def build_index_from_ids(self, unique_token_ids, corpus_token_ids, show_progress=True, leave_progress=False):
        n_docs, n_vocab = len(corpus_token_ids), len(unique_token_ids)
        doc_len = np.fromiter((len(d) for d in corpus_token_ids), dtype=np.int64, count=n_docs)
        tokens = np.fromiter((t for d in corpus_token_ids for t in d), dtype=np.int64, count=int(doc_len.sum()))
        docs = np.repeat(np.arange(n_docs, dtype=np.int64), doc_len)
        pairs, tf = np.unique(docs * n_vocab + tokens, return_counts=True)
        pair_doc, pair_tok = pairs // n_vocab, pairs % n_vocab
        doc_freq = np.bincount(pair_tok, minlength=n_vocab).astype(np.float64)
        idf = okapi_idf(doc_freq, n_docs, self.epsilon)
        norm = self.k1 * (1 - self.b + self.b * doc_len[pair_doc] / doc_len.mean())
        weights = idf[pair_tok] * tf * (self.k1 + 1) / (tf + norm)
        self.nonoccurrence_array = None
        matrix = sp.csc_matrix((weights, (pair_doc, pair_tok)), shape=(n_docs, n_vocab), dtype=self.dtype)
        return {"data": matrix.data, "indices": matrix.indices, "indptr": matrix.indptr, "num_docs": n_docs}


def token_ids(documents: Iterable[list[str]]) -> tuple[list[list[int]], dict[str, int]]:
    """Each document as token ids, numbered in order of first appearance: the same index in every process
    (bm25s numbers the tokens of a set, in an order that changes with the string hash seed)."""
    vocab: dict[str, int] = {}
    ids = [[vocab.setdefault(token, len(vocab)) for token in doc] for doc in documents]
    return ids, vocab


def top_k_indices(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k highest scores, best first; ties go to the lower index (stable)."""
    k = min(k, len(scores))
    if k <= 0:
        return np.empty(0, dtype=np.int64)
    part = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
    return part[np.lexsort((part, -scores[part]))]


def bm25_cache_key(corpus: IndexedCorpus, k1: float = 1.5, b: float = 0.75, epsilon: float = 0.25) -> str:
    """Names a BM25 index: corpus hash plus everything that changes the weights."""
    return f"{corpus.content_hash[:24]}-k1{k1}-b{b}-eps{epsilon}-{TOKENIZER_VERSION}-{INDEX_VERSION}"


class BM25Retriever:
    """Lexical retriever: BM25Okapi (k1=1.5, b=0.75, epsilon=0.25) over title + text."""

    name = "bm25"

    def __init__(
        self,
        chunks: IndexedCorpus | Iterable[Chunk] | Mapping[str, Chunk],
        *,
        k1: float = 1.5,
        b: float = 0.75,
        epsilon: float = 0.25,
        top_k: int = 5,
        snippet_chars: int = DEFAULT_SNIPPET_CHARS,
        _index: bm25s.BM25 | None = None,
    ):
        self.corpus = as_indexed(chunks)
        self.k1, self.b, self.epsilon = k1, b, epsilon
        self.top_k, self.snippet_chars = top_k, snippet_chars
        if _index is None:
            _index = _OkapiBM25(k1=k1, b=b, epsilon=epsilon)
            # No empty-token column: every query token we look up is a real word (see scores()).
            _index.index(token_ids(tokenize(indexed_text(c)) for c in self.corpus.chunks), create_empty_token=False,
                         show_progress=False)
        self._index = _index

    @property
    def chunk_ids(self) -> list[str]:
        return self.corpus.chunk_ids

    def scores(self, query: str) -> np.ndarray:
        """BM25Okapi score of every chunk, in corpus order."""
        token_ids = self._index.get_tokens_ids(tokenize(query))
        if not token_ids:
            return np.zeros(len(self.corpus))
        return self._index.get_scores_from_ids(token_ids)

    def rank(self, query: str, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Corpus rows of the top-k chunks and their scores, best first; chunks scoring 0 are left out."""
        scores = self.scores(query)
        rows = top_k_indices(scores, k)
        top = scores[rows]
        zero = np.flatnonzero(top == 0)
        end = int(zero[0]) if len(zero) else len(rows)
        return rows[:end], top[:end]

    def search(self, query: str, k: int | None = None) -> list[Hit]:
        """Top-k chunks; chunks sharing no term with the query (score 0) are never returned."""
        return hits_at(self.corpus, *self.rank(query, k or self.top_k), self.name, self.snippet_chars)

    def search_batch(self, queries: list[str], k: int | None = None) -> list[list[Hit]]:
        return [self.search(q, k) for q in queries]

    def settings(self) -> RetrieverSettings:
        return RetrieverSettings(kind=self.name, top_k=self.top_k, bm25_k1=self.k1, bm25_b=self.b)

    def cache_key(self) -> str:
        return bm25_cache_key(self.corpus, self.k1, self.b, self.epsilon)

    def save(self, directory: str | Path) -> None:
        """Write the index (bm25s files plus our chunk order and parameters) into directory."""
        directory = Path(directory)
        self._index.save(directory)
        meta: dict[str, Any] = {"chunk_ids": self.chunk_ids, "k1": self.k1, "b": self.b,
                                "epsilon": self.epsilon, "tokenizer": TOKENIZER_VERSION,
                                "corpus_hash": self.corpus.content_hash}
        (directory / "trajscope_bm25.json").write_text(json.dumps(meta))

    @classmethod
    def load(cls, directory: str | Path, chunks: IndexedCorpus | Iterable[Chunk] | Mapping[str, Chunk],
             *, top_k: int = 5, snippet_chars: int = DEFAULT_SNIPPET_CHARS) -> BM25Retriever:
        """Load a saved index; raises ValueError when it was built from other chunks or is damaged."""
        directory = Path(directory)
        corpus = as_indexed(chunks)
        meta = json.loads((directory / "trajscope_bm25.json").read_text())
        if meta.get("corpus_hash") != corpus.content_hash or meta.get("chunk_ids") != corpus.chunk_ids:
            raise ValueError(f"{directory}: BM25 index was built from a different corpus")
        # Loaded as plain bm25s: querying only sums the stored weights, whichever class built them.
        index = bm25s.BM25.load(directory, show_progress=False)
        scores = index.scores
        if scores["num_docs"] != len(corpus) or len(scores["indptr"]) != len(index.vocab_dict) + 1:
            raise ValueError(f"{directory}: BM25 index arrays do not match its vocabulary")
        return cls(corpus, k1=meta["k1"], b=meta["b"], epsilon=meta["epsilon"], top_k=top_k,
                   snippet_chars=snippet_chars, _index=index)
