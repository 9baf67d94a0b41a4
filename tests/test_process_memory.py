"""bench.process_memory: a child's peak is its own (not its parent's, as ru_maxrss reports), and a reset
peak shows growth in a process that peaked higher before."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from bench.process_memory import peak_rss_mb, reset_peak_rss

ROOT = Path(__file__).resolve().parents[1]
CHILD = ("import json, resource; from bench.process_memory import peak_rss_mb; "
         "print(json.dumps([peak_rss_mb(), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024]))")


def test_a_child_of_a_large_process_reports_its_own_peak():
    ballast = bytearray(400 * 1024 * 1024)
    ballast[::4096] = b"x" * len(ballast[::4096])  # touch every page, so it is resident
    done = subprocess.run([sys.executable, "-c", CHILD], cwd=ROOT, capture_output=True, text=True, check=True)
    del ballast
    own, inherited = json.loads(done.stdout)
    assert inherited > 400, "ru_maxrss no longer carries the parent's peak: the helper's reason is gone"
    assert own < 200, own


def test_growth_after_a_reset_is_seen_though_the_process_peaked_higher_before():
    ballast = bytearray(300 * 1024 * 1024)
    ballast[::4096] = b"x" * len(ballast[::4096])
    del ballast
    before = reset_peak_rss()
    assert peak_rss_mb() - before < 50
    grown = bytearray(100 * 1024 * 1024)
    grown[::4096] = b"x" * len(grown[::4096])
    assert 90 < peak_rss_mb() - before < 250
    del grown
