"""Dense retrieval: sentence-transformers embeddings, L2-normalised, in a FAISS inner-product index."""
from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import faiss
import numpy as np

from trajscope.format import Chunk, RetrieverSettings

from ._cache import default_cache_dir, slug
from ._corpus import IndexedCorpus, as_indexed, indexed_text
from ._encoder import DEFAULT_EMBEDDING_MODEL, load_encoder
from ._hit import DEFAULT_SNIPPET_CHARS, Hit, hits_at
from ._query_encoder import load_query_encoder, query_backend_setting

_EMBEDDINGS_FILE, _INDEX_FILE, _META_FILE = "embeddings.npy", "index.faiss", "trajscope_dense.json"


def normalise_rows(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (zero rows stay zero), as contiguous float32 for FAISS."""
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms == 0, 1, norms)


def dense_cache_key(corpus: IndexedCorpus, model: str) -> str:
    """Names a dense index: embedding model plus corpus hash."""
    return f"{slug(model)}-{corpus.content_hash[:24]}"


class DenseRetriever:
    """Cosine retrieval over title + text with any sentence-transformers model (default MiniLM).

    Passages are embedded by torch; queries by query_backend: "auto" (default, or $TRAJSCOPE_QUERY_BACKEND)
    uses a verified ONNX export cached under cache_dir/onnx when onnxruntime is installed, "onnx"
    requires it, "torch" never uses it.
    """

    name = "dense"

    def __init__(
        self,
        chunks: IndexedCorpus | Iterable[Chunk] | Mapping[str, Chunk],
        model: str = DEFAULT_EMBEDDING_MODEL,
        *,
        encoder: Any = None,
        embeddings: np.ndarray | None = None,
        top_k: int = 5,
        snippet_chars: int = DEFAULT_SNIPPET_CHARS,
        batch_size: int = 64,
        device: str = "cpu",
        query_cache_size: int = 1024,
        query_backend: str | None = None,
        query_threads: int | None = None,
        cache_dir: str | Path | None = None,
        _index: faiss.Index | None = None,
    ):
        self.corpus = as_indexed(chunks)
        self.model, self.device, self.batch_size = model, device, batch_size
        self.top_k, self.snippet_chars = top_k, snippet_chars
        self._encoder = encoder
        # A caller-supplied encoder defines the vectors, so it encodes queries too.
        self.query_backend = "torch" if encoder is not None else query_backend_setting(query_backend)
        self.query_threads = query_threads
        self.cache_dir = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()
        self._query_encoder: Any = None
        # Agents and paired conditions repeat queries; encoding dominates query latency.
        self.query_cache_size = query_cache_size
        self._query_vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        if _index is None:
            if embeddings is None:
                embeddings = self.embed([indexed_text(c) for c in self.corpus.chunks])
            embeddings = normalise_rows(embeddings)
            if embeddings.ndim != 2 or embeddings.shape[0] != len(self.corpus):
                raise ValueError(f"embeddings have shape {embeddings.shape}, expected ({len(self.corpus)}, dim)")
            _index = faiss.IndexFlatIP(embeddings.shape[1])
            _index.add(embeddings)
        self.index = _index

    @property
    def chunk_ids(self) -> list[str]:
        return self.corpus.chunk_ids

    @property
    def encoder(self) -> Any:
        """The sentence-transformers model, loaded on first use (a cached index needs none)."""
        if self._encoder is None:
            self._encoder = load_encoder(self.model, self.device)
        return self._encoder

    @property
    def query_encoder(self) -> Any:
        """The encoder for queries: the cached ONNX export of the model under backend "auto"/"onnx", else torch."""
        if self._query_encoder is None:
            self._query_encoder = load_query_encoder(self.model, self.cache_dir, lambda: self.encoder,
                                                     self.query_backend, self.query_threads)
        return self._query_encoder

    def embed(self, texts: list[str]) -> np.ndarray:
        """Unit-length float32 embeddings of passages, one row each, by the torch encoder."""
        return self._encode(self.encoder, texts, "document")

    def encode_queries(self, queries: list[str]) -> np.ndarray:
        """Unit-length float32 query embeddings by the query encoder, bypassing the query cache."""
        return self._encode(self.query_encoder, queries, "query")

    def _encode(self, encoder: Any, texts: list[str], role: str) -> np.ndarray:
        # encode_query / encode_document (sentence-transformers >= 5) apply the model's own prompt for
        # that role, e.g. Qwen3-Embedding's query instruction; MiniLM's prompts are empty.
        method = getattr(encoder, f"encode_{role}", None) or encoder.encode
        vectors = method(texts, batch_size=self.batch_size, convert_to_numpy=True,
                         normalize_embeddings=True, show_progress_bar=False)
        return normalise_rows(np.asarray(vectors).reshape(len(texts), -1))

    def embed_queries(self, queries: list[str]) -> np.ndarray:
        """Query embeddings, reusing the last query_cache_size distinct queries' vectors."""
        missing = list(dict.fromkeys(q for q in queries if q not in self._query_vectors))
        if missing:
            for query, vector in zip(missing, self.encode_queries(missing), strict=False):
                self._query_vectors[query] = vector
        for query in queries:
            self._query_vectors.move_to_end(query)
        vectors = np.stack([self._query_vectors[q] for q in queries])
        while len(self._query_vectors) > self.query_cache_size:
            self._query_vectors.popitem(last=False)
        return vectors

    def embeddings(self) -> np.ndarray:
        """The indexed chunk embeddings, in corpus order."""
        return self.index.reconstruct_n(0, self.index.ntotal)

    def search(self, query: str, k: int | None = None) -> list[Hit]:
        return self.search_batch([query], k)[0]

    def search_batch(self, queries: list[str], k: int | None = None) -> list[list[Hit]]:
        """Top-k by cosine similarity for every query; the queries are encoded in one batch."""
        return [hits_at(self.corpus, rows, scores, self.name, self.snippet_chars)
                for rows, scores in self.rank_batch(queries, k or self.top_k)]

    def rank_batch(self, queries: list[str], k: int) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per query, corpus rows of the top-k chunks and their cosine scores, best first."""
        if not queries:
            return []
        scores, rows = self.index.search(self.embed_queries(queries), min(k, self.index.ntotal))
        ranked = []
        for s, r in zip(scores, rows, strict=False):
            end = int(np.count_nonzero(r >= 0))  # FAISS pads the tail with -1 when fewer results exist
            ranked.append((r[:end], s[:end]))
        return ranked

    def settings(self) -> RetrieverSettings:
        return RetrieverSettings(kind=self.name, top_k=self.top_k, embedding_model=self.model)

    def cache_key(self) -> str:
        return dense_cache_key(self.corpus, self.model)

    def save(self, directory: str | Path) -> None:
        """Write embeddings (.npy), the FAISS index and what they were built from into directory."""
        directory = Path(directory)
        np.save(directory / _EMBEDDINGS_FILE, self.embeddings())
        faiss.write_index(self.index, str(directory / _INDEX_FILE))
        meta = {"model": self.model, "corpus_hash": self.corpus.content_hash, "n": self.index.ntotal,
                "dim": self.index.d}
        (directory / _META_FILE).write_text(json.dumps(meta))

    @classmethod
    def load(cls, directory: str | Path, chunks: IndexedCorpus | Iterable[Chunk] | Mapping[str, Chunk],
             model: str = DEFAULT_EMBEDDING_MODEL, *, encoder: Any = None, top_k: int = 5,
             snippet_chars: int = DEFAULT_SNIPPET_CHARS, device: str = "cpu",
             query_cache_size: int = 1024, query_backend: str | None = None, query_threads: int | None = None,
             cache_dir: str | Path | None = None) -> DenseRetriever:
        """Load a saved index; raises ValueError when it was built from other chunks, another model or is damaged."""
        directory = Path(directory)
        corpus = as_indexed(chunks)
        meta = json.loads((directory / _META_FILE).read_text())
        if meta.get("model") != model or meta.get("corpus_hash") != corpus.content_hash:
            raise ValueError(f"{directory}: dense index was built from another model or corpus")
        try:
            index = faiss.read_index(str(directory / _INDEX_FILE))
        except RuntimeError as exc:
            raise ValueError(f"{directory}: unreadable FAISS index ({exc})") from None
        if index.ntotal != len(corpus) or index.d != meta.get("dim") or index.metric_type != faiss.METRIC_INNER_PRODUCT:
            raise ValueError(f"{directory}: FAISS index does not match its metadata")
        return cls(corpus, model, encoder=encoder, top_k=top_k, snippet_chars=snippet_chars, device=device,
                   query_cache_size=query_cache_size, query_backend=query_backend, query_threads=query_threads,
                   cache_dir=cache_dir, _index=index)
