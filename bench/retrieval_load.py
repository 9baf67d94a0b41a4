"""Retrieval under load: warm hybrid queries at concurrency 1 / 8 / 32, idle and beside two busy processes.

Run from the repo root:  .venv/bin/python bench/retrieval_load.py [--questions N] [--tiny] [--cache-dir DIR]
Each case runs the 2WikiMultiHopQA questions (real encoding every query: no query-vector cache) from
`concurrency` client threads sharing one retriever, once with the encoder's idle default threads and once
with the threads the engine chooses (engine.retrieval.query_threads_for_load); it prints queries per
second against the single-query bound (1 / the concurrency-1 p50 of the same case and threads) and the
per-query p50. The loaded case starts two busy-looping processes itself and stops them at the end.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

from retrieval_2wiki import load_2wiki, percentile_ms

from trajscope.engine.retrieval import (
    DEFAULT_QUERY_THREADS,
    DenseRetriever,
    HybridRetriever,
    OnnxEncoder,
    build_retriever,
    default_cache_dir,
    index_corpus,
    query_threads_for_load,
    usable_cores,
)

CONCURRENCY = (1, 8, 32)
BUSY_PROCESSES = 2
TARGET_MS = 5.0


def _client_retriever(shared: HybridRetriever, encoder: OnnxEncoder) -> HybridRetriever:
    # One per client thread: its own (disabled) query-vector cache, so threads never mutate one
    # OrderedDict; the FAISS index, BM25 index and the onnxruntime session (run() is thread-safe) are shared.
    dense = DenseRetriever(shared.dense.corpus, shared.dense.model, query_cache_size=0,
                           cache_dir=shared.dense.cache_dir, _index=shared.dense.index)
    dense._query_encoder = encoder
    return HybridRetriever(shared.bm25, dense, shared.rrf_k, top_k=shared.top_k)


def run_case(shared: HybridRetriever, encoder: OnnxEncoder, questions: list[str],
             concurrency: int) -> tuple[float, list[float]]:
    """(queries per second, per-query seconds) for every question, spread over `concurrency` threads."""
    clients = [_client_retriever(shared, encoder) for _ in range(concurrency)]
    for client in clients[:1]:
        for q in questions[:10]:
            client.search(q)
    latencies: list[list[float]] = [[] for _ in clients]
    start_line = threading.Barrier(concurrency + 1)

    def work(i: int) -> None:
        start_line.wait()
        for q in questions[i::concurrency]:
            t0 = time.perf_counter()
            clients[i].search(q)
            latencies[i].append(time.perf_counter() - t0)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(concurrency)]
    for t in threads:
        t.start()
    start_line.wait()
    t0 = time.perf_counter()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    every = [x for chunk in latencies for x in chunk]
    return len(every) / wall, every


def start_busy(n: int) -> list[subprocess.Popen]:
    """n processes that spin a core each until killed (the other work of a loaded machine)."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


def stop_busy(procs: list[subprocess.Popen]) -> None:
    for proc in procs:
        proc.kill()
        proc.wait()


def wait_for_load(target: float, limit_s: float) -> float:
    """Wait until the 1-minute load average reaches target (it lags a new load by tens of seconds)."""
    deadline = time.monotonic() + limit_s
    while os.getloadavg()[0] < target and time.monotonic() < deadline:
        time.sleep(2)
    return os.getloadavg()[0]


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


Row = tuple[str, int, str, int, float, float, float, float]  # case, conc, setting, threads, q/s, bound, p50, p95


def measure(shared: HybridRetriever, directory: Path, questions: list[str], case: str) -> tuple[str, list[Row]]:
    """Default threads vs the load-chosen threads at each concurrency, in one machine state."""
    load = os.getloadavg()[0]
    encoders: dict[int, OnnxEncoder] = {}
    bound: dict[int, float] = {}  # threads -> 1 / p50 of one query at a time, in this state
    rows: list[Row] = []
    for concurrency in CONCURRENCY:
        chosen = query_threads_for_load(concurrency, load=load)
        for setting, threads in (("default", DEFAULT_QUERY_THREADS), ("chosen", chosen)):
            encoder = encoders.setdefault(threads, OnnxEncoder(directory, threads))
            qps, latencies = run_case(shared, encoder, questions, concurrency)
            if concurrency == 1:
                bound.setdefault(threads, 1 / statistics.median(latencies))
            if threads not in bound:
                bound[threads] = 1 / statistics.median(run_case(shared, encoder, questions, 1)[1])
            rows.append((case, concurrency, setting, threads, qps, bound[threads],
                         percentile_ms(latencies, 50), percentile_ms(latencies, 95)))
    return f"{case}: load average {load:.2f} when the threads were chosen ({uptime()})", rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache-dir", type=Path, default=default_cache_dir())
    parser.add_argument("--questions", type=int, default=None, help="the first N questions only (default all 1,000)")
    parser.add_argument("--tiny", action="store_true", help="30 questions over about 300 passages, no wait "
                        "for the load average to rise: checks the script runs")
    args = parser.parse_args()
    if os.environ.get("TRAJSCOPE_QUERY_THREADS"):
        sys.exit("unset TRAJSCOPE_QUERY_THREADS: it overrides the load-chosen threads this bench measures")

    chunks, questions, _ = load_2wiki(args.tiny)
    questions = questions[:args.questions] if args.questions else questions
    shared = build_retriever(index_corpus(chunks), "hybrid", args.cache_dir, None, 5, 60, query_backend="onnx")
    assert isinstance(shared, HybridRetriever)
    directory = shared.dense.query_encoder.directory
    print(f"{len(questions)} questions over {len(chunks):,} passages; {usable_cores()} cores; "
          f"default encoder threads {DEFAULT_QUERY_THREADS}; {BUSY_PROCESSES} busy processes when loaded")
    notes, rows = [], []
    note, found = measure(shared, directory, questions, "idle")
    notes.append(note)
    rows += found
    idle_load = os.getloadavg()[0]
    busy = start_busy(BUSY_PROCESSES)
    try:
        if not args.tiny:
            wait_for_load(idle_load + BUSY_PROCESSES - 0.5, limit_s=90)
        note, found = measure(shared, directory, questions, "loaded")
        notes.append(note)
        rows += found
    finally:
        stop_busy(busy)
    print("\n".join(notes))
    print(f"{'case':<7} {'conc':>4} {'setting':<8} {'threads':>7} {'q/s':>7} {'bound':>7} {'ratio':>6} "
          f"{'p50 ms':>7} {'p95 ms':>7}")
    for case, concurrency, setting, threads, qps, single, p50, p95 in rows:
        print(f"{case:<7} {concurrency:>4} {setting:<8} {threads:>7} {qps:>7.0f} {single:>7.0f} {qps / single:>6.2f} "
              f"{p50:>7.2f} {p95:>7.2f}")
    loaded = next(r for r in rows if r[:3] == ("loaded", 1, "chosen"))
    verdict = "meets" if loaded[6] <= TARGET_MS else "misses"
    print(f"loaded, concurrency 1, chosen threads: p50 {loaded[6]:.2f} ms ({verdict} the {TARGET_MS:.0f} ms target)")


if __name__ == "__main__":
    main()
