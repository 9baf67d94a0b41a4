"""Side by side with peers at their users' sizes: Inspect AI and Arize Phoenix loading their own logs versus trajscope.

Run from the repo root:  .venv/bin/python bench/peers.py [--samples 100000] [--traces 10000] [--tiny]
                         [--workdir DIR] [--phoenix-python PATH]
Inspect AI (bench/peers_inspect.py): a log of --samples samples (questions x epochs, each with search and read tool
calls and an `exact` score) written by inspect_ai's own writer; inspect_ai.analysis.samples_df and read_eval_log with
accuracy by epoch against `trajscope ingest` + the same query over run_summary.
Phoenix (bench/peers_phoenix.py): --traces traces of a search/read agent on the openai SDK, traced by the real
openinference-instrumentation-openai over the loopback mock server, loaded into a fresh local Phoenix server over
OTLP and read back as its span dataframe, against `trajscope ingest` of Phoenix's JSONL export + run_summary.
Phoenix runs from .venv-peers (`make bench-peers` builds it from pyproject.toml's `peers` extra: it pins
OpenTelemetry below the main venv's); without it the Phoenix half says so and is not run.
Each side runs in a fresh process that pays its own imports; its wall time and peak resident memory are printed,
and both sides' answers must agree. Prints measured numbers only.
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

import peers_inspect
import peers_phoenix

TINY_SAMPLES = 50
TINY_TRACES = 20
ROOT = Path(__file__).resolve().parents[1]
PEERS_PYTHON = ROOT / ".venv-peers" / "bin" / "python"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=100_000, help="Inspect samples")
    parser.add_argument("--traces", type=int, default=10_000, help="Phoenix traces")
    parser.add_argument("--tiny", action="store_true",
                        help=f"{TINY_SAMPLES} samples and {TINY_TRACES} traces: checks the script runs")
    parser.add_argument("--workdir", type=Path, default=None, help="where the logs and the warehouses go")
    parser.add_argument("--phoenix-python", type=Path, default=PEERS_PYTHON,
                        help="the interpreter with arize-phoenix (default: .venv-peers/bin/python)")
    args = parser.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="trajscope-peers-"))
    work.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)}
    trajscope = [sys.executable, "-m", "trajscope"] if shutil.which("trajscope") is None else ["trajscope"]

    print("== Inspect AI ==")
    peers_inspect.run(TINY_SAMPLES if args.tiny else args.samples, work, env, trajscope)
    print("== Arize Phoenix ==")
    if not args.phoenix_python.is_file():
        print(f"Phoenix half not run: no {args.phoenix_python} (`make bench-peers` builds .venv-peers from "
              "pyproject.toml's `peers` extra)")
        return
    peers_phoenix.run(TINY_TRACES if args.tiny else args.traces, work, env, trajscope, str(args.phoenix_python))


if __name__ == "__main__":
    main()
