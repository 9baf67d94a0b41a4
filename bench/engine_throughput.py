"""Engine benchmark: trajectories/s against a fixed-latency mock endpoint, and engine CPU per model call.

    .venv/bin/python bench/engine_throughput.py [--latency 0.2] [--levels 1,8,32,64] [--per-slot 4] [--tiny]

The mock runs in its own process (so its CPU is not counted) and plays a 3-call episode
(search, search, final) for the real Read-Gate controller over the demo corpus with BM25.
After an untimed warm-up run, for each concurrency c it runs per_slot * c episodes and prints throughput as a
ratio to the ideal c / (calls_per_episode * latency), and the engine's CPU time per model call as a share of the
latency: 'CPU ms/call' is the run's whole CPU over its calls; 'per step' subtracts a one-episode run's CPU
(per-run setup) first.
Targets: ratio >= 0.8 at c = 32; CPU share <= 2 %.
"""
from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

import msgspec

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.mock_process import start_mock  # noqa: E402
from trajscope.engine.controllers import get_controller  # noqa: E402
from trajscope.engine.environment import ToolEnvironment  # noqa: E402
from trajscope.engine.llm import resolve_model  # noqa: E402
from trajscope.engine.retrieval import build_retriever  # noqa: E402
from trajscope.engine.runs import RunInputs, RunSpec, execute_run_async  # noqa: E402
from trajscope.ingest.datasets import load_dataset  # noqa: E402

CALLS_PER_EPISODE = 3


def bench_inputs(n: int, cache_dir: Path) -> RunInputs:
    dataset = load_dataset("demo")
    corpus = {c.chunk_id: c for c in dataset.chunks}
    retriever = build_retriever(dataset.chunks, kind="bm25", cache_dir=cache_dir)
    base = dataset.questions
    # More episodes than the demo has questions: replicate them under new ids and distinct texts, so
    # the response cache (on, as in real runs) never answers for the mock.
    questions = [msgspec.structs.replace(q, question_id=f"{q.question_id}#{i}", text=f"{q.text} (#{i})")
                 for i, q in ((i, base[i % len(base)]) for i in range(n))]
    return RunInputs(
        dataset_name="demo", questions=questions, corpus=corpus,
        controller=get_controller("read_gate", "baseline", max_turns=CALLS_PER_EPISODE + 2),
        retriever=retriever, make_environment=lambda **kw: ToolEnvironment(corpus, retriever, **kw),
        retriever_settings={"kind": "bm25", "top_k": 5},
    )


async def measure(level: int, per_slot: int, base_url: str, latency: float, work: Path,
                  n: int | None = None) -> dict[str, float]:
    n = n or max(per_slot * level, 16)
    inputs = bench_inputs(n, work / "cache")
    spec = RunSpec(dataset="demo", controller="read_gate", condition="baseline", model=f"mock:{base_url}",
                   concurrency=level, run_id=f"bench-c{level}", out_dir=work / "runs", cache=True,
                   cache_path=work / f"cache-c{level}.sqlite", progress=False, timeout_s=30.0)
    config = resolve_model(spec.model, protocol="tools")
    cpu0, wall0 = time.process_time(), time.perf_counter()
    summary = await execute_run_async(spec, inputs, model_config=config)
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    if summary.cache_hits:
        raise SystemExit(f"{summary.cache_hits} cache hits at c={level}: episodes must all reach the mock")
    if summary.n_errors:
        raise SystemExit(f"{summary.n_errors} episodes failed at c={level}: the bench needs clean episodes")
    calls = summary.model_requests
    ideal = level / (CALLS_PER_EPISODE * latency)
    return {"c": level, "n": n, "calls": calls, "wall_s": wall, "traj_per_s": n / wall, "ideal": ideal,
            "ratio": n / wall / ideal, "cpu_s": cpu, "cpu_ms_per_call": cpu / calls * 1000}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--levels", default="1,8,32,64")
    parser.add_argument("--per-slot", type=int, default=4, help="episodes per concurrency slot")
    parser.add_argument("--tiny", action="store_true",
                        help="20 ms latency, levels 1,4, one episode per slot: checks the script runs, not speed")
    args = parser.parse_args()
    if args.tiny:
        args.latency, args.levels, args.per_slot = 0.02, "1,4", 1
    process, base_url = start_mock(args.latency, CALLS_PER_EPISODE)
    rows = []
    try:
        with tempfile.TemporaryDirectory(prefix="trajscope-bench-engine-") as tmp:
            # Untimed warm-up: lazy imports and first-use initialisation are not per-step costs.
            asyncio.run(measure(4, 2, base_url, args.latency, Path(tmp) / "warmup"))
            # A one-episode run prices the per-run setup (client, cache, log), which is not a per-step cost.
            setup = asyncio.run(measure(1, 1, base_url, args.latency, Path(tmp) / "setup", n=1))
            for level in (int(x) for x in args.levels.split(",")):
                row = asyncio.run(measure(level, args.per_slot, base_url, args.latency, Path(tmp)))
                marginal = (row["cpu_s"] - setup["cpu_s"]) / (row["calls"] - setup["calls"])
                row.update(marginal_ms_per_call=marginal * 1000, cpu_share=marginal / args.latency)
                rows.append(row)
    finally:
        process.terminate()
        process.wait()
    print(f"mock latency {args.latency * 1000:.0f} ms, {CALLS_PER_EPISODE} model calls per episode "
          "(read_gate baseline, BM25)")
    print(f"per-run setup: {setup['cpu_s'] * 1000:.0f} ms CPU (excluded from the per-step figure)")
    print(f"{'conc':>5} {'episodes':>8} {'wall s':>7} {'traj/s':>8} {'ideal':>7} {'ratio':>6} "
          f"{'CPU ms/call':>12} {'per step':>9} {'share':>7}")
    for r in rows:
        print(f"{r['c']:>5} {r['n']:>8} {r['wall_s']:>7.2f} {r['traj_per_s']:>8.2f} {r['ideal']:>7.2f} "
              f"{r['ratio']:>6.2f} {r['cpu_ms_per_call']:>12.2f} {r['marginal_ms_per_call']:>9.2f} "
              f"{r['cpu_share'] * 100:>6.2f}%")
    at32 = [r for r in rows if r["c"] == 32]
    if at32:
        print(f"target ratio >= 0.80 at 32: {at32[0]['ratio']:.2f}; target CPU share <= 2%: "
              f"{max(r['cpu_share'] for r in rows) * 100:.2f}% (worst level)")


if __name__ == "__main__":
    main()
