"""Who&When failure attribution by a model: each protocol on the first N logs, scored beside the baselines.

    .venv/bin/python bench/attribute_whowhen.py [--n 16] [--model local] [--protocols step-by-step,binary-search]

Takes the N Who&When Algorithm-Generated logs with the lowest question ids (the order `trajscope attribute
--limit` uses), ingests them as one run into a fresh warehouse (the logs are linked into a temporary folder,
never copied into the project), runs `trajscope attribute` for each protocol (concurrency 1: the embedded model
serves one request at a time, and queued requests time out on a loaded machine), and prints
`trajscope agreement --human` on those N: step- and agent-level accuracy with Wilson 95% intervals, beside
always-first-step, always-final-step, uniform random and most-frequent-agent on the same N. Prints the wall
time of each protocol and the load average.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from trajscope.analysis.queries import human_agreement  # noqa: E402
from trajscope.engine.llm import ResponseCache, resolve_model  # noqa: E402
from trajscope.engine.scanners import attribute  # noqa: E402
from trajscope.warehouse import open_read  # noqa: E402
from trajscope.warehouse.export import to_markdown  # noqa: E402

LOGS = ROOT.parent / "shared" / "data" / "external_logs" / "who_and_when" / "algorithm_generated"
RUN = "who_and_when:algorithm_generated"


def first_logs(n: int) -> list[Path]:
    """The n logs with the lowest question ids."""
    keyed = sorted((json.loads(p.read_text())["question_ID"], p) for p in LOGS.glob("*.json"))
    return [p for _, p in keyed[:n]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=16)
    parser.add_argument("--model", default="local")
    parser.add_argument("--protocols", default="step-by-step,binary-search,all-at-once")
    parser.add_argument("--token-budget", type=int, default=2000)
    parser.add_argument("--cache", default=None, help="Response cache file (default: none, every call is made).")
    parser.add_argument("--tiny", action="store_true",
                        help="Two logs, all-at-once only: checks the script runs (tests/test_bench.py).")
    args = parser.parse_args()
    if args.tiny:
        args.n, args.protocols, args.token_budget = 2, "all-at-once", 1000
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "algorithm_generated"  # the run id comes from the folder's name
        folder.mkdir()
        for p in first_logs(args.n):
            (folder / p.name).symlink_to(p)
        db = Path(tmp) / "ww.duckdb"
        subprocess.run([sys.executable, "-m", "trajscope", "ingest", str(folder), "--db", str(db)], check=True,
                       cwd=ROOT, stdout=subprocess.DEVNULL)
        config = resolve_model(args.model, temperature=0.0)
        cache = ResponseCache(Path(args.cache)) if args.cache else None
        print(f"{args.n} logs, model {config.name}, budget {args.token_budget}, load {os.getloadavg()[0]:.1f}")
        for protocol in args.protocols.split(","):
            start = time.perf_counter()
            report = attribute(db, [RUN], protocol, config=config, cache=cache, concurrency=1,
                               token_budget=args.token_budget)
            print(f"{protocol}: {time.perf_counter() - start:.0f} s wall, load {os.getloadavg()[0]:.1f}; "
                  f"{report.summary()}")
            for error in report.errors:
                print(f"  no attribution: {error}")
        with open_read(db) as con:
            result = human_agreement(con, RUN)
            steps = con.execute(
                "SELECT method, list(step_index ORDER BY trajectory_id) FROM model_step_attributions "
                "GROUP BY method ORDER BY method").fetchall()
        print(to_markdown(result.frame()))
        for method, named in steps:
            print(f"{method}: steps named {named}")


if __name__ == "__main__":
    main()
