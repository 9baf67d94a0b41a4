"""The ONNX query encoder: same vectors and rankings as torch MiniLM, cached on disk, torch fallback."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import trajscope.engine.retrieval._query_encoder as query_encoder_module
from trajscope.engine.retrieval import (
    MIN_COSINE,
    BM25Retriever,
    DenseRetriever,
    HybridRetriever,
    OnnxEncoder,
    load_query_encoder,
    onnx_cache_entry,
    query_backend_setting,
)
from trajscope.format import Chunk

FIXTURE = Path("tests/fixtures/retrieval/corpus.json")
MODEL = "all-MiniLM-L6-v2"
QUERIES = [
    "a sleeping kitty lying on a rug",
    "how do I make a loaf",
    "Which prize did the novel about the apple farm win?",
    "Where was the engineer of the bridge over the Tell born?",
    "sailing race in harbour cities",
    "publisher who founded a press",
    "Wann fährt der Zug? café naïve",
    "river " * 300,  # longer than MiniLM's 256-token limit: truncation must match
]


@pytest.fixture(scope="module")
def chunks() -> list[Chunk]:
    return [Chunk(**row) for row in json.loads(FIXTURE.read_text())]


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cache")


@pytest.fixture(scope="module")
def torch_dense(chunks: list[Chunk], cache_dir: Path) -> DenseRetriever:
    return DenseRetriever(chunks, query_backend="torch", cache_dir=cache_dir, query_cache_size=0)


@pytest.fixture(scope="module")
def onnx_dense(chunks: list[Chunk], cache_dir: Path, torch_dense: DenseRetriever) -> DenseRetriever:
    dense = DenseRetriever(chunks, embeddings=torch_dense.embeddings(), query_backend="onnx",
                           cache_dir=cache_dir, query_cache_size=0)
    dense._encoder = torch_dense.encoder  # export from the already loaded torch model
    return dense


def test_onnx_query_vectors_match_torch(torch_dense: DenseRetriever, onnx_dense: DenseRetriever) -> None:
    assert isinstance(onnx_dense.query_encoder, OnnxEncoder)
    reference = torch_dense.encode_queries(QUERIES)
    for vectors in (onnx_dense.encode_queries(QUERIES),  # one padded batch
                    np.vstack([onnx_dense.encode_queries([q]) for q in QUERIES])):  # one at a time
        assert vectors.shape == reference.shape == (len(QUERIES), 384)
        cosines = (vectors * reference).sum(axis=1)
        assert cosines.min() >= MIN_COSINE, cosines
        np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_onnx_rankings_equal_torch_on_fixture(chunks: list[Chunk], torch_dense: DenseRetriever,
                                              onnx_dense: DenseRetriever) -> None:
    bm25 = BM25Retriever(chunks)
    torch_hybrid, onnx_hybrid = HybridRetriever(bm25, torch_dense), HybridRetriever(bm25, onnx_dense)
    for query in QUERIES:
        expected, got = torch_dense.search(query, k=5), onnx_dense.search(query, k=5)
        assert [h.chunk_id for h in got] == [h.chunk_id for h in expected], query
        np.testing.assert_allclose([h.score for h in got], [h.score for h in expected], atol=1e-4)
        assert [h.chunk_id for h in onnx_hybrid.search(query)] == [h.chunk_id for h in torch_hybrid.search(query)]
    assert onnx_dense.search(QUERIES[0])[0].chunk_id == "r09"


def test_export_is_cached_and_reused(onnx_dense: DenseRetriever, cache_dir: Path,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    onnx_dense.query_encoder  # noqa: B018 - ensure the export exists
    entry = onnx_cache_entry(cache_dir, MODEL)
    meta = json.loads((entry / "trajscope_onnx.json").read_text())
    assert meta["pooling"] == "mean" and meta["normalize"] and meta["min_probe_cosine"] >= MIN_COSINE
    assert (entry / "model.onnx").stat().st_size > 1_000_000

    def no_torch() -> Any:
        raise AssertionError("a cached export must not load the torch model")

    monkeypatch.setattr(query_encoder_module, "export_onnx_encoder", no_torch)
    encoder = load_query_encoder(MODEL, cache_dir, no_torch, "onnx", threads=2)
    assert isinstance(encoder, OnnxEncoder) and encoder.threads == 2
    np.testing.assert_allclose(encoder.encode(QUERIES[:2]), onnx_dense.encode_queries(QUERIES[:2]), atol=1e-5)


def test_damaged_export_is_rebuilt(tmp_path: Path, torch_dense: DenseRetriever) -> None:
    first = load_query_encoder(MODEL, tmp_path, lambda: torch_dense.encoder, "onnx")
    entry = onnx_cache_entry(tmp_path, MODEL)
    (entry / "model.onnx").write_bytes(b"not an onnx graph")
    rebuilt = load_query_encoder(MODEL, tmp_path, lambda: torch_dense.encoder, "onnx")
    assert isinstance(rebuilt, OnnxEncoder)
    assert (entry / "model.onnx").stat().st_size > 1_000_000
    np.testing.assert_allclose(rebuilt.encode(QUERIES[:3]), first.encode(QUERIES[:3]), atol=1e-5)


def test_without_onnxruntime_auto_falls_back_to_torch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      torch_dense: DenseRetriever) -> None:
    monkeypatch.setattr(query_encoder_module, "onnxruntime_available", lambda: False)
    torch_encoder = torch_dense.encoder
    assert load_query_encoder(MODEL, tmp_path, lambda: torch_encoder, "auto") is torch_encoder
    with pytest.raises(RuntimeError, match="onnxruntime"):
        load_query_encoder(MODEL, tmp_path, lambda: torch_encoder, "onnx")
    assert not (tmp_path / "onnx").exists()


def test_backend_switch(monkeypatch: pytest.MonkeyPatch, chunks: list[Chunk], tmp_path: Path,
                        torch_dense: DenseRetriever) -> None:
    monkeypatch.setenv("TRAJSCOPE_QUERY_BACKEND", "torch")
    assert query_backend_setting() == "torch" and query_backend_setting("onnx") == "onnx"
    dense = DenseRetriever(chunks, embeddings=torch_dense.embeddings(), cache_dir=tmp_path)
    dense._encoder = torch_dense.encoder
    assert dense.query_encoder is torch_dense.encoder
    assert not (tmp_path / "onnx").exists()
    monkeypatch.setenv("TRAJSCOPE_QUERY_BACKEND", "tensorrt")
    with pytest.raises(ValueError, match="unknown query encoder backend"):
        DenseRetriever(chunks, embeddings=torch_dense.embeddings(), cache_dir=tmp_path)


class Transformer:
    do_lower_case = False


class Pooling:
    pooling_mode = "lasttoken"


class LastTokenModel(list):
    """Stands in for a SentenceTransformer whose pooling has no ONNX counterpart here."""

    tokenizer = None

    def encode(self, texts: list[str], **_: object) -> np.ndarray:
        return np.ones((len(texts), 4), dtype=np.float32)


def test_unsupported_model_is_recorded_and_falls_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = LastTokenModel([Transformer(), Pooling()])
    exports: list[Any] = []
    original = query_encoder_module.export_onnx_encoder

    def counting_export(encoder: Any, *args: Any) -> Any:
        exports.append(encoder)
        return original(encoder, *args)

    monkeypatch.setattr(query_encoder_module, "export_onnx_encoder", counting_export)
    assert load_query_encoder("last-token-model", tmp_path, lambda: model, "auto") is model
    meta = json.loads((onnx_cache_entry(tmp_path, "last-token-model") / "trajscope_onnx.json").read_text())
    assert "lasttoken" in meta["unsupported"]
    assert load_query_encoder("last-token-model", tmp_path, lambda: model, "auto") is model
    assert exports == [model]  # tried once; the recorded verdict answers the second call
    with pytest.raises(ValueError, match="lasttoken"):
        load_query_encoder("last-token-model", tmp_path, lambda: model, "onnx")


def test_explicit_encoder_encodes_queries(chunks: list[Chunk], tmp_path: Path, torch_dense: DenseRetriever) -> None:
    encoder = torch_dense.encoder
    dense = DenseRetriever(chunks[:3], encoder=encoder, cache_dir=tmp_path)
    assert dense.query_encoder is encoder and dense.query_backend == "torch"


def test_a_models_query_and_document_prompts_are_applied(chunks: list[Chunk], tmp_path: Path,
                                                         torch_dense: DenseRetriever) -> None:
    # An instruction-style embedder (as Qwen3-Embedding is) made from MiniLM: queries and passages
    # get their prompts, and the ONNX export declines such a model so torch encodes its queries.
    from sentence_transformers import SentenceTransformer

    base = torch_dense.encoder
    prompted = SentenceTransformer(modules=list(base), device="cpu",
                                   prompts={"query": "Instruct: find the passage\nQuery: ", "document": "Passage: "})
    dense = DenseRetriever(chunks[:4], "prompted-minilm", encoder=prompted, cache_dir=tmp_path)
    query = "a sleeping kitty lying on a rug"
    expected_query = base.encode(["Instruct: find the passage\nQuery: " + query], normalize_embeddings=True)
    np.testing.assert_allclose(dense.encode_queries([query]), expected_query, atol=1e-5)
    plain_query = base.encode([query], normalize_embeddings=True)
    assert float((dense.encode_queries([query]) * plain_query).sum()) < 0.99  # the prompt changed the vector
    expected_docs = base.encode(["Passage: " + f"{c.title}\n{c.text}" if c.title else "Passage: " + c.text
                                 for c in chunks[:4]], normalize_embeddings=True)
    np.testing.assert_allclose(dense.embeddings(), expected_docs, atol=1e-5)
    assert load_query_encoder("prompted-minilm", tmp_path, lambda: prompted, "auto") is prompted
    meta = json.loads((onnx_cache_entry(tmp_path, "prompted-minilm") / "trajscope_onnx.json").read_text())
    assert "query prompt" in meta["unsupported"]
