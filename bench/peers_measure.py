"""A command in a fresh process: its wall time, its output and its peak resident memory (wait4's ru_maxrss).

Linux carries the parent's peak into a child across fork + exec, so the parent (bench/peers.py) stays a small
stdlib-only process and every measured side, the log builders included, runs in a child of its own.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class Measured:
    """One finished child: seconds from start to exit, what it printed, its peak resident MB and its exit status."""

    seconds: float
    stdout: str
    peak_mb: float
    returncode: int = 0
    stderr: str = ""


def _reap(process: subprocess.Popen[bytes]) -> tuple[int, float]:
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    return process.returncode, usage.ru_maxrss / 1024


def measure(args: list[str], env: dict[str, str], *, check: bool = True) -> Measured:
    """Run args to completion; exit the bench with its output if it fails, unless check is False."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        process = subprocess.Popen(args, stdout=out, stderr=err, env=env)
        code, peak_mb = _reap(process)
        seconds = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    if code != 0 and check:
        sys.exit(f"{' '.join(args[:3])} exited {code}:\n{stdout}\n{stderr[-4000:]}")
    return Measured(seconds, stdout, peak_mb, code, stderr)


def start_server(args: list[str], env: dict[str, str], log_path: str) -> subprocess.Popen[bytes]:
    """A long-running child (a server) whose output goes to log_path."""
    with open(log_path, "wb") as log:
        return subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, env=env)


def stop_server(process: subprocess.Popen[bytes]) -> float:
    """Stop the server (SIGTERM, then SIGKILL after 20 s) and return its peak resident MB over its whole life."""
    process.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        if pid:
            process.returncode = os.waitstatus_to_exitcode(status)
            return usage.ru_maxrss / 1024
        time.sleep(0.1)
    process.kill()
    return _reap(process)[1]
