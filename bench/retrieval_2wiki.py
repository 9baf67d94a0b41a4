"""Retrieval benchmark on the 2WikiMultiHopQA corpus (6,119 passages, 1,000 questions).

Run from the repo root:  .venv/bin/python bench/retrieval_2wiki.py [--cold] [--cache-dir DIR] [--tiny]
Measures cold index build (with embedding), cached load, warm hybrid latency (p50/p95), recall@5 of
gold passages (corpus titles equal to evidence subjects) for BM25, dense and RRF, and rank-bm25 vs
bm25s query time; then the ONNX query encoder against torch (1 and 2 threads, interleaved per query),
the smallest cosine between their vectors and whether dense top-5 ids agree on all 1,000 questions.
Prints measured numbers only; targets are shown next to them.
"""
from __future__ import annotations

import argparse
import json
import shutil
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from trajscope.engine.retrieval import (
    DEFAULT_QUERY_THREADS,
    QUERY_BACKENDS,
    HybridRetriever,
    OnnxEncoder,
    bm25_cache_key,
    build_retriever,
    default_cache_dir,
    dense_cache_key,
    index_corpus,
    indexed_text,
    load_encoder,
    tokenize,
)
from trajscope.format import Chunk

# Real data stays in shared/ beside the checkout (../shared/data from the repo root).
DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "2wikimultihopqa"
TINY_QUESTIONS, TINY_PASSAGES = 30, 300


def load_2wiki(tiny: bool = False) -> tuple[list[Chunk], list[str], list[set[str]]]:
    """Chunks (id = position), question texts, and per question the gold chunk ids by title.

    tiny: the first TINY_QUESTIONS questions over their gold passages plus the first TINY_PASSAGES others.
    """
    rows = json.loads((DATA / "corpus_6119.json").read_text())
    chunks = [Chunk(chunk_id=f"2wiki-{i:05d}", title=r["title"], text=r["text"], dataset="2wiki")
              for i, r in enumerate(rows)]
    by_title = {c.title: c.chunk_id for c in chunks}
    questions = json.loads((DATA / "questions_1000.json").read_text())
    golds = [{by_title[s] for s, _, _ in q["evidence"] if s in by_title} for q in questions]
    if tiny:
        questions, golds = questions[:TINY_QUESTIONS], golds[:TINY_QUESTIONS]
        keep = set().union(*golds) | {c.chunk_id for c in chunks[:TINY_PASSAGES]}
        chunks = [c for c in chunks if c.chunk_id in keep]
    return chunks, [q["question"] for q in questions], golds


def percentile_ms(samples: list[float], q: float) -> float:
    return float(np.percentile(samples, q)) * 1000


def timed(fn, *args):
    start = time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - start


def recall_at_5(results: list[list], golds: list[set[str]]) -> tuple[float, float]:
    """Mean fraction of gold passages in the top 5, and share of questions with all golds there."""
    fractions, complete = [], []
    for hits, gold in zip(results, golds, strict=False):
        if not gold:
            continue
        found = gold & {h.chunk_id for h in hits[:5]}
        fractions.append(len(found) / len(gold))
        complete.append(found == gold)
    return float(np.mean(fractions)), float(np.mean(complete))


def _encode_one_with(encoder: Any) -> Callable[[str], Any]:
    """A one-query encode call bound to this encoder (normalised numpy vector, no progress bar)."""
    return lambda q: encoder.encode([q], convert_to_numpy=True, normalize_embeddings=True, show_progress_bar=False)


def compare_query_encoders(retriever: HybridRetriever, questions: list[str]) -> list[tuple[str, str, str]]:
    """ONNX (1 and 2 threads) vs torch query encoding, interleaved per query so load swings hit all alike."""
    import torch

    dense = retriever.dense
    torch_encoder = dense.encoder
    if not isinstance(dense.query_encoder, OnnxEncoder):
        return [("ONNX query encoder", "not in use (backend torch or unavailable)", "")]
    directory = dense.query_encoder.directory
    encoders = {"onnx 1 thread": OnnxEncoder(directory, 1), "onnx 2 threads": OnnxEncoder(directory, 2),
                "torch 1 thread": torch_encoder}
    encode = {name: _encode_one_with(e) for name, e in encoders.items()}
    torch.set_num_threads(1)
    for q in questions[:20]:
        for fn in encode.values():
            fn(q)
    times: dict[str, list[float]] = {name: [] for name in encode}
    for q in questions[:400]:
        for name, fn in encode.items():
            times[name].append(timed(fn, q)[1])
    rows = [(f"query encoding {name} p50 / p95 ({min(len(questions), 400)} q, interleaved)",
             f"{percentile_ms(t, 50):.2f} / {percentile_ms(t, 95):.2f} ms", "") for name, t in times.items()]
    onnx_vectors = encoders["onnx 1 thread"].encode(questions, normalize_embeddings=True)
    torch_vectors = np.asarray(torch_encoder.encode(questions, batch_size=64, convert_to_numpy=True,
                                                    normalize_embeddings=True, show_progress_bar=False))
    cosine = float((onnx_vectors * torch_vectors).sum(axis=1).min())
    _, onnx_ids = dense.index.search(onnx_vectors, 5)
    _, torch_ids = dense.index.search(np.ascontiguousarray(torch_vectors, dtype=np.float32), 5)
    same = int((onnx_ids == torch_ids).all(axis=1).sum())
    rows.append((f"ONNX vs torch query vectors, min cosine ({len(questions)} q)", f"{cosine:.7f}", ">= 0.9999"))
    rows.append(("dense top-5 ids identical, ONNX vs torch", f"{same} / {len(questions)} questions", ""))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache-dir", type=Path, default=default_cache_dir())
    parser.add_argument("--cold", action="store_true", help="delete this corpus's cache entries first")
    parser.add_argument("--threads", type=int, default=DEFAULT_QUERY_THREADS,
                        help="query encoder threads (onnxruntime or torch)")
    parser.add_argument("--query-backend", choices=QUERY_BACKENDS, default="auto",
                        help="query encoder: ONNX export (auto/onnx) or torch")
    parser.add_argument("--tiny", action="store_true",
                        help=f"{TINY_QUESTIONS} questions over about {TINY_PASSAGES} passages: checks the script runs")
    args = parser.parse_args()

    import torch

    chunks, questions, golds = load_2wiki(args.tiny)
    corpus = index_corpus(chunks)
    entries = [args.cache_dir / "bm25" / bm25_cache_key(corpus),
               args.cache_dir / "dense" / dense_cache_key(corpus, "all-MiniLM-L6-v2")]
    rows: list[tuple[str, str, str]] = []
    if args.cold:
        for entry in entries:
            shutil.rmtree(entry, ignore_errors=True)
    if not all(e.exists() for e in entries):
        encoder, t_model = timed(load_encoder)
        retriever, t_cold = timed(build_retriever, corpus, "hybrid", args.cache_dir, None, 5, 60)
        rows.append(("cold build: model load", f"{t_model:.2f} s", ""))
        rows.append((f"cold build: BM25 + embed {len(chunks):,} + FAISS", f"{t_cold:.1f} s", ""))
    else:
        rows.append(("cold build", "skipped (cached; pass --cold)", ""))

    retriever, t_load = timed(lambda: build_retriever(corpus, "hybrid", args.cache_dir, None, 5, 60,
                                                      query_backend=args.query_backend, query_threads=args.threads))
    assert isinstance(retriever, HybridRetriever)
    rows.append(("cached index load (BM25 + FAISS)", f"{t_load * 1000:.0f} ms", "<= 2 s"))
    query_encoder, t_enc = timed(lambda: retriever.dense.query_encoder)
    backend = "onnx" if isinstance(query_encoder, OnnxEncoder) else "torch"
    rows.append((f"query encoder load ({backend}; first dense query)", f"{t_enc:.2f} s", ""))

    torch.set_num_threads(args.threads)
    retriever.dense.query_cache_size = 0  # measure real encoding for every query
    for q in questions[:20]:
        retriever.search(q)
    hybrid_t, enc_t, faiss_t, bm25_t = [], [], [], []
    for q in questions:
        _, t = timed(retriever.search, q)
        hybrid_t.append(t)
    # The parts in the order a hybrid search runs them, so each sees the caches it sees there.
    for q in questions:
        _, t = timed(retriever.bm25.rank, q, 50)
        bm25_t.append(t)
        vector, t = timed(retriever.dense.encode_queries, [q])
        enc_t.append(t)
        _, t = timed(retriever.dense.index.search, vector, 50)
        faiss_t.append(t)
    rows.append(("warm hybrid search p50", f"{percentile_ms(hybrid_t, 50):.2f} ms", "<= 5 ms"))
    rows.append(("warm hybrid search p95", f"{percentile_ms(hybrid_t, 95):.2f} ms", ""))
    rows.append(("  of which BM25 rank top-50 p50", f"{percentile_ms(bm25_t, 50):.3f} ms", ""))
    rows.append(("  of which query encoding p50", f"{percentile_ms(enc_t, 50):.2f} ms", ""))
    rows.append(("  of which FAISS top-50 p50", f"{percentile_ms(faiss_t, 50):.3f} ms", ""))
    retriever.dense.query_cache_size = 4096
    retriever.dense.search_batch(questions)
    cached_t = [timed(retriever.search, q)[1] for q in questions]
    rows.append(("hybrid search p50, query vector cached", f"{percentile_ms(cached_t, 50):.2f} ms", ""))

    bm25_res = retriever.bm25.search_batch(questions, 5)
    dense_res = retriever.dense.search_batch(questions, 5)
    hybrid_res = retriever.search_batch(questions, 5)
    n_gold = sum(1 for g in golds if g)
    for name, res in (("BM25", bm25_res), ("dense", dense_res), ("RRF hybrid", hybrid_res)):
        mean, complete = recall_at_5(res, golds)
        rows.append((f"recall@5 {name} ({n_gold} q with gold)", f"{mean:.3f} (all gold: {complete:.3f})", ""))

    from rank_bm25 import BM25Okapi

    reference = BM25Okapi([tokenize(indexed_text(c)) for c in chunks])
    sample = questions[:200]
    rank_t = [timed(lambda q: np.argsort(reference.get_scores(tokenize(q)))[::-1][:5], q)[1] for q in sample]
    ours_t = [timed(retriever.bm25.search, q, 5)[1] for q in sample]
    rows.append((f"rank-bm25 top-5 query p50 ({len(sample)} q)", f"{percentile_ms(rank_t, 50):.2f} ms", ""))
    rows.append((f"bm25s top-5 query p50 ({len(sample)} q)", f"{percentile_ms(ours_t, 50):.3f} ms", ""))
    rows.append(("rank-bm25 / bm25s median time", f"{statistics.median(rank_t) / statistics.median(ours_t):.0f}x", ""))

    rows.extend(compare_query_encoders(retriever, questions))

    width = max(len(r[0]) for r in rows)
    print(f"\n2WikiMultiHopQA{' (tiny)' if args.tiny else ''}: {len(chunks)} passages, {len(questions)} questions; "
          f"query encoder {backend}, {args.threads} thread(s)")
    print(f"{'measure'.ljust(width)}  {'measured':<32} target")
    for name, value, target in rows:
        print(f"{name.ljust(width)}  {value:<32} {target}")


if __name__ == "__main__":
    main()
