"""Start a Python child that appends to a log, SIGKILL it once the log holds enough lines (the kill-resume tests)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).parent.parent


def kill_after_lines(code: str, log: Path, lines: int, *, deadline_s: float = 120.0) -> int:
    """Run `python -c code` from the repository root and SIGKILL it once `log` has `lines` newlines (or at
    the deadline); the child must still be running then. Returns the log's newline count after the kill."""
    child = subprocess.Popen([sys.executable, "-c", code], cwd=REPO, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + deadline_s
        while time.monotonic() < deadline:
            if log.exists() and log.read_bytes().count(b"\n") >= lines:
                break
            assert child.poll() is None, child.stderr.read().decode()[-2000:]
            time.sleep(0.02)
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait()
    assert child.returncode == -signal.SIGKILL, f"the child ended on its own ({child.returncode})"
    return log.read_bytes().count(b"\n")
