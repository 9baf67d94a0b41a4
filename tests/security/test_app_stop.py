"""SIGTERM stops `trajscope app` promptly: Streamlit gets STOP_GRACE_S, then is killed; no orphan is left."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from trajscope.cli.app_cmd import STOP_GRACE_S


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.slow
def test_sigterm_stops_the_dashboard_and_its_server(warehouse_db):
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "trajscope", "app", "--db", str(warehouse_db), "--port", str(port)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            cwd=str(Path(__file__).parents[2]))
    try:
        assert "trajscope dashboard on" in proc.stdout.readline()
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.5)
        children = [int(p) for p in Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()]
        assert children, "the Streamlit server runs as a child of trajscope app"
        proc.send_signal(signal.SIGTERM)
        # The bound: the grace period plus generous slack for a loaded machine.
        assert proc.wait(timeout=STOP_GRACE_S + 30) == 0
        for child in children:
            assert not Path(f"/proc/{child}").exists() or "zombie" in Path(f"/proc/{child}/status").read_text()
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
