"""The on-disk index cache: a second build loads from disk; a damaged entry is rebuilt."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from trajscope.engine.retrieval import (
    BM25Retriever,
    DenseRetriever,
    HybridRetriever,
    bm25_cache_key,
    build_retriever,
    default_cache_dir,
    dense_cache_key,
    index_corpus,
)
from trajscope.format import Chunk

FIXTURE = Path("tests/fixtures/retrieval/corpus.json")


class CountingHashEncoder:
    """Deterministic bag-of-words hashing encoder that counts how many texts it embedded."""

    def __init__(self, dim: int = 64):
        self.dim, self.encoded = dim, 0

    def encode(self, texts, **_: object) -> np.ndarray:
        self.encoded += len(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                out[row, int(hashlib.md5(word.encode()).hexdigest(), 16) % self.dim] += 1
        return out


def chunks() -> list[Chunk]:
    return [Chunk(**row) for row in json.loads(FIXTURE.read_text())]


def test_bm25_second_build_loads_from_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = build_retriever(chunks(), kind="bm25", cache_dir=tmp_path)
    entry = tmp_path / "bm25" / bm25_cache_key(index_corpus(chunks()))
    assert (entry / "trajscope_bm25.json").exists()
    loads: list[Path] = []
    original = BM25Retriever.load.__func__

    def spy(cls, directory, *a, **kw):
        loads.append(Path(directory))
        return original(cls, directory, *a, **kw)

    monkeypatch.setattr(BM25Retriever, "load", classmethod(spy))
    second = build_retriever(chunks(), kind="bm25", cache_dir=tmp_path, top_k=3)
    assert loads == [entry]
    assert second.top_k == 3
    assert second.search("Lantern Prize novel") == first.search("Lantern Prize novel", k=3)


def test_corrupt_bm25_cache_is_rebuilt(tmp_path: Path) -> None:
    expected = build_retriever(chunks(), kind="bm25", cache_dir=tmp_path).search("Marrow Bridge")
    entry = tmp_path / "bm25" / bm25_cache_key(index_corpus(chunks()))
    (entry / "data.csc.index.npy").write_bytes(b"not a numpy file")
    rebuilt = build_retriever(chunks(), kind="bm25", cache_dir=tmp_path)
    assert rebuilt.search("Marrow Bridge") == expected
    np.load(entry / "data.csc.index.npy")  # the entry was rewritten whole


def test_changed_corpus_gets_its_own_entry(tmp_path: Path) -> None:
    build_retriever(chunks(), kind="bm25", cache_dir=tmp_path)
    edited = chunks()
    edited[0] = Chunk(chunk_id="r01", title="Marrow Bridge", text="A wooden footbridge.")
    retriever = build_retriever(edited, kind="bm25", cache_dir=tmp_path)
    assert len(list((tmp_path / "bm25").iterdir())) == 2
    assert retriever.search("wooden footbridge")[0].chunk_id == "r01"


def test_dense_second_build_embeds_nothing(tmp_path: Path) -> None:
    encoder = CountingHashEncoder()
    first = build_retriever(chunks(), kind="dense", cache_dir=tmp_path, embedding_model="hash-64", encoder=encoder)
    assert encoder.encoded == len(chunks())
    entry = tmp_path / "dense" / dense_cache_key(index_corpus(chunks()), "hash-64")
    assert {"embeddings.npy", "index.faiss", "trajscope_dense.json"} <= {p.name for p in entry.iterdir()}
    assert np.load(entry / "embeddings.npy").shape == (len(chunks()), 64)

    second_encoder = CountingHashEncoder()
    second = build_retriever(chunks(), kind="dense", cache_dir=tmp_path, embedding_model="hash-64",
                             encoder=second_encoder)
    assert isinstance(second, DenseRetriever)
    hits = second.search("salt marshes harbour city")
    assert second_encoder.encoded == 1  # only the query
    assert hits == first.search("salt marshes harbour city")


def test_corrupt_dense_cache_is_rebuilt(tmp_path: Path) -> None:
    build_retriever(chunks(), kind="dense", cache_dir=tmp_path, embedding_model="hash-64",
                    encoder=CountingHashEncoder())
    entry = tmp_path / "dense" / dense_cache_key(index_corpus(chunks()), "hash-64")
    (entry / "index.faiss").write_bytes(b"garbage")
    encoder = CountingHashEncoder()
    retriever = build_retriever(chunks(), kind="dense", cache_dir=tmp_path, embedding_model="hash-64",
                                encoder=encoder)
    assert encoder.encoded == len(chunks())
    assert retriever.search("Lantern Prize bronze")[0].chunk_id == "r07"
    assert DenseRetriever.load(entry, chunks(), "hash-64", encoder=encoder).index.ntotal == len(chunks())


def test_dense_cache_is_keyed_by_model(tmp_path: Path) -> None:
    for model in ("hash-a", "hash-b"):
        build_retriever(chunks(), kind="dense", cache_dir=tmp_path, embedding_model=model,
                        encoder=CountingHashEncoder())
    assert len(list((tmp_path / "dense").iterdir())) == 2
    entry = tmp_path / "dense" / dense_cache_key(index_corpus(chunks()), "hash-a")
    with pytest.raises(ValueError, match="another model or corpus"):
        DenseRetriever.load(entry, chunks(), "hash-b")


def test_hybrid_build_uses_both_caches(tmp_path: Path) -> None:
    retriever = build_retriever(chunks(), kind="hybrid", cache_dir=tmp_path, embedding_model="hash-64",
                                encoder=CountingHashEncoder(), rrf_k=30, top_k=4)
    assert isinstance(retriever, HybridRetriever)
    assert retriever.rrf_k == 30 and len(retriever.search("Esker wool market")) == 4
    settings = retriever.settings()
    assert (settings.kind, settings.rrf_k, settings.embedding_model, settings.bm25_k1) == ("hybrid", 30, "hash-64", 1.5)
    assert {p.name for p in tmp_path.iterdir()} == {"bm25", "dense"}


def test_default_cache_dir_honours_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRAJSCOPE_CACHE", str(tmp_path / "c"))
    assert default_cache_dir() == tmp_path / "c"
    monkeypatch.delenv("TRAJSCOPE_CACHE")
    assert default_cache_dir() == Path.home() / ".cache" / "trajscope"


def test_unknown_kind_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown retriever kind 'splade'"):
        build_retriever(chunks(), kind="splade", cache_dir=tmp_path)  # type: ignore[arg-type]


def test_repeated_queries_are_encoded_once() -> None:
    encoder = CountingHashEncoder()
    dense = DenseRetriever(chunks(), "hash-64", encoder=encoder, query_cache_size=2)
    base = encoder.encoded
    first = dense.search("salt marshes")
    assert dense.search_batch(["salt marshes", "salt marshes"])[1] == first
    assert encoder.encoded == base + 1
    dense.search("bridge")
    dense.search("novel")  # evicts "salt marshes" (least recently used)
    dense.search("salt marshes")
    assert encoder.encoded == base + 4
    uncached = DenseRetriever(chunks(), "hash-64", encoder=encoder, query_cache_size=0)
    before = encoder.encoded
    uncached.search("bridge")
    uncached.search("bridge")
    assert encoder.encoded == before + 2
