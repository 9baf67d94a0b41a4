"""Scanner benchmark: `trajscope scan` over synthetic trajectories against a fixed-latency mock model.

    .venv/bin/python bench/scan.py [--n 1000] [--latency 0.2] [--levels 8,32,64] [--tiny]

Builds a warehouse of n synthetic trajectories (bench/synthetic.py, one run; not timed). The mock runs in its
own process (its CPU is not counted) and answers every rubric question with a valid verdict after `latency`
seconds. For each concurrency c the whole scan is timed (the slice through the read path, reading and
rendering the trajectories, the model calls, storing the verdicts), with no response cache, and throughput is
printed as a ratio to the ideal c / latency, end to end and for the model phase alone (rendering and the calls,
without the fixed cost of the slice query's worker process, reading and storing). Target: model-phase
ratio >= 0.8 at c = 32.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from synthetic import write_synthetic_log  # noqa: E402

from bench.mock_process import ready  # noqa: E402
from trajscope.engine.llm import resolve_model  # noqa: E402
from trajscope.engine.scanners import scan  # noqa: E402
from trajscope.warehouse import ingest_paths  # noqa: E402

RUBRIC = "The agent read a gold passage and still answered wrong."
_MOCK = """
import json, signal, sys, threading
from trajscope.engine.mock_llm import MockLLMServer, reply_json
reply = lambda request: reply_json({"verdict": "no_match", "explanation": "benchmark", "cited_steps": ["0"]},
                                   tokens_in=600, tokens_out=20)
server = MockLLMServer(reply, latency_s=float(sys.argv[1])).start()
print("READY", server.base_url, flush=True)
done = threading.Event()
signal.signal(signal.SIGTERM, lambda *_: done.set())
done.wait()
server.stop()
"""


def start_mock(latency: float) -> tuple[subprocess.Popen[str], str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH"))))}
    return ready(subprocess.Popen([sys.executable, "-c", _MOCK, str(latency)], cwd=ROOT, stdout=subprocess.PIPE,
                                  text=True, env=env))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=1000, help="trajectories scanned")
    parser.add_argument("--latency", type=float, default=0.2, help="seconds the mock takes per answer")
    parser.add_argument("--levels", default="8,32,64", help="concurrency levels")
    parser.add_argument("--tiny", action="store_true", help="40 trajectories, 0.05 s, levels 4,8 (for tests)")
    args = parser.parse_args()
    if args.tiny:
        args.n, args.latency, args.levels = 40, 0.05, "4,8"
    levels = [int(x) for x in args.levels.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        log, db = Path(tmp) / "log.jsonl", Path(tmp) / "wh.duckdb"
        write_synthetic_log(log, args.n, n_conditions=1)
        ingest_paths(db, [log])
        process, base_url = start_mock(args.latency)
        try:
            config = resolve_model(f"mock:{base_url}")
            print(f"scan of {args.n:,} trajectories, mock latency {args.latency:g} s, load {os.getloadavg()[0]:.1f}")
            print(" conc  seconds  traj/s  ideal/s  ratio  model s  model ratio  (slice / read / store s)")
            for c in levels:
                started = time.perf_counter()
                report = scan(db, RUBRIC, ["synthetic-baseline"], config=config, concurrency=c)
                seconds = time.perf_counter() - started
                assert report.counts.get("no_match") == args.n, report.summary()
                rate, ideal = args.n / seconds, c / args.latency
                t = report.seconds
                model_ratio = args.n / t["model"] / ideal
                print(f"{c:5d}  {seconds:7.2f}  {rate:6.1f}  {ideal:7.1f}  {rate / ideal:5.2f}  {t['model']:7.2f}  "
                      f"{model_ratio:11.2f}  ({t['slice']:.2f} / {t['read']:.2f} / {t['store']:.2f})")
        finally:
            process.terminate()
            process.wait(timeout=10)


if __name__ == "__main__":
    main()
