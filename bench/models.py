"""Embedded-model comparison: which small GGUF model makes the best `--model local` default.

    nice -n 10 .venv/bin/python bench/models.py [--models smollm2-135m-instruct,gemma3-270m]
                                                [--demo-n 10] [--hotpot-n 20] [--threads 2] [--tiny]

(`--tiny`: the default model on one question of each set, two turns, BM25 only: a smoke run whose
figures mean nothing.)

Each model runs the Read-Gate baseline (search / read / final, JSON actions, max_tokens 96 as in
`trajscope demo`) on the first --demo-n seeded demo questions and on --hotpot-n real HotpotQA
questions from ../shared/data, with a fresh response cache (every reply is a real model call),
served with --threads llama.cpp threads. Printed per model and dataset, as a Markdown table:

- valid actions: share of model replies whose action was carried out (not an ErrorStep: malformed
  JSON, unknown action, empty answer, or arguments the environment refused, e.g. an unseen chunk id);
- EM and Contain-Acc, the share of trajectories that answered without reading
  (`zero_read_final_rate`), reads and turns per question, all from the `run_summary` view;
- seconds per step: mean latency of a model reply (prompt evaluation + generation), measured with
  whatever else the machine runs at the time (the load average is printed).
"""
from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from trajscope.engine.llm import LOCAL_MODEL_NAME, LOCAL_MODELS, LocalModelServer  # noqa: E402
from trajscope.engine.runs import RunSpec, execute_run_async, model_config_for  # noqa: E402
from trajscope.format import ErrorStep, iter_trajectories  # noqa: E402
from trajscope.warehouse import open_read  # noqa: E402

HOTPOT = ROOT.parent / "shared" / "data" / "hotpotqa" / "hotpotqa_distractor_dev_100.json"


def reply_stats(log_path: Path) -> tuple[int, int, float]:
    """(model replies, valid replies, total reply latency in s) from a run's log."""
    replies = valid = 0
    latency_ms = 0.0
    for decoded in iter_trajectories(log_path):
        for step in decoded.trajectory.steps:
            if not step.tokens_out:  # a reply is charged to the first step it produced
                continue
            replies += 1
            valid += not isinstance(step, ErrorStep)
            latency_ms += step.latency_ms or 0.0
    return replies, valid, latency_ms / 1000


def summary_row(db: Path, run_id: str) -> dict[str, float | int | None]:
    with open_read(db) as con:
        row = con.execute(
            """SELECT n_trajectories, em, contain_acc, zero_read_final_rate, mean_reads, mean_turns,
                      error_trajectories
               FROM run_summary WHERE run_id = ?""", [run_id]).fetchone()
    keys = ("n", "em", "contain", "zero_read", "reads", "turns", "error_trajectories")
    return dict(zip(keys, row, strict=False))


def measure(model: str, dataset: str, n: int, threads: int, work: Path, *, params: dict[str, int],
            retriever: str) -> dict[str, object]:
    spec = RunSpec(dataset=dataset, controller="read_gate", condition="baseline", model=f"local:{model}", n=n,
                   seed=0, concurrency=1, max_tokens=96, out_dir=work / "runs", db_path=work / "bench.duckdb",
                   cache_path=work / f"cache-{model}.sqlite", progress=False, params=params, retriever=retriever)
    with LocalModelServer(model=model, n_threads=threads) as server:
        config = model_config_for(spec).with_overrides(base_url=server.base_url)
        started = time.perf_counter()
        summary = asyncio.run(execute_run_async(spec, model_config=config))
        wall = time.perf_counter() - started
    replies, valid, reply_s = reply_stats(summary.log_path)
    row = summary_row(spec.db_path, summary.run_id)
    return {"model": model, "dataset": Path(dataset).stem if "/" in dataset else dataset, **row,
            "replies": replies, "valid": valid / replies if replies else None,
            "s_per_step": reply_s / replies if replies else None, "wall_s": wall}


def _pct(value: object) -> str:
    return "—" if value is None else f"{100 * float(value):.0f} %"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(LOCAL_MODELS))
    parser.add_argument("--demo-n", type=int, default=10)
    parser.add_argument("--hotpot-n", type=int, default=20)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--tiny", action="store_true", help="Smoke run: default model, 1 question each, 2 turns.")
    args = parser.parse_args()
    params, retriever = {}, "hybrid"
    if args.tiny:
        args.models, args.demo_n, args.hotpot_n = LOCAL_MODEL_NAME, 1, 1
        params, retriever = {"max_turns": 2}, "bm25"
    if not HOTPOT.is_file():
        raise SystemExit(f"{HOTPOT}: the real HotpotQA sample is missing (../shared/data beside the repo)")
    rows = []
    with tempfile.TemporaryDirectory(prefix="trajscope-bench-models-") as tmp:
        for model in args.models.split(","):
            for dataset, n in (("demo", args.demo_n), (str(HOTPOT), args.hotpot_n)):
                row = measure(model, dataset, n, args.threads, Path(tmp), params=params, retriever=retriever)
                rows.append(row)
                print(f"# {row}", flush=True)
    print(f"\nload average at the end: {os.getloadavg()[0]:.1f} ({os.cpu_count()} cores)\n")
    print("| model | dataset | questions | valid actions | EM | Contain-Acc | answered without reading "
          "| reads / q | turns / q | s / step | wall s |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['model']} | {r['dataset']} | {r['n']} | {_pct(r['valid'])} | {_pct(r['em'])} | "
              f"{_pct(r['contain'])} | {_pct(r['zero_read'])} | {r['reads']:.1f} | {r['turns']:.1f} | "
              f"{r['s_per_step']:.2f} | {r['wall_s']:.0f} |")


if __name__ == "__main__":
    main()
