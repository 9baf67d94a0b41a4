"""The benchmarks' mock model endpoint in its own process, so its serving does not share the measured interpreter."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def ready(process: subprocess.Popen[str]) -> tuple[subprocess.Popen[str], str]:
    """The process and its base URL once it prints `READY <base_url>`; the bench stops if it prints anything else."""
    line = process.stdout.readline() if process.stdout else ""
    if not line.startswith("READY "):
        process.kill()
        raise SystemExit(f"mock server did not start: {line!r}")
    return process, line.split()[1]


def start_mock(latency: float, steps: int) -> tuple[subprocess.Popen[str], str]:
    """`python -m trajscope.engine.mock_llm`: `latency` seconds per call, `steps` model calls per episode."""
    return ready(subprocess.Popen(
        [sys.executable, "-m", "trajscope.engine.mock_llm", "--latency", str(latency), "--steps", str(steps)],
        cwd=ROOT, stdout=subprocess.PIPE, text=True,
    ))
