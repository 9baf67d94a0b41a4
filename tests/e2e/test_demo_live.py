"""`trajscope demo` serves first and fills live: the URL is the first line, the dashboard answers its health
endpoint while the runs go on, and the Overview (never reloaded) shows trajectories arriving per condition,
then the finished build and its findings. The model is the loopback mock, slowed so the build takes a while."""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.request

import pytest
from browser_support import ROOT, free_port, headless_chromium

from trajscope.app.progress import read_progress
from trajscope.engine.mock_llm import MockLLMServer, reply_tool_call

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]  # minutes on a loaded 2-core machine
N = 4


def _slow_search_then_final(request):
    time.sleep(1.0)  # a slow model: the build lasts long enough to be watched
    if any(m.get("role") == "tool" for m in request.messages):
        return reply_tool_call("final", {"answer": "Denmore"})
    return reply_tool_call("search", {"query": "bridge"})


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as answer:
            return answer.status == 200
    except OSError:
        return False


def test_the_dashboard_serves_first_and_fills_while_the_demo_builds(tmp_path):
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    db = tmp_path / "demo.duckdb"
    with MockLLMServer(_slow_search_then_final) as model:
        proc = subprocess.Popen(
            [sys.executable, "-m", "trajscope", "demo", "--model", model.model_spec, "--n", str(N), "--audit-n", "0",
             "--conditions", "read_gate/baseline,read_gate/full", "--port", str(port), "--db", str(db),
             "--out", str(tmp_path / "runs")],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            env={**os.environ, "TRAJSCOPE_CACHE": str(tmp_path / "cache")})
        lines: list[str] = []
        reader = threading.Thread(target=lambda: lines.extend(proc.stdout), daemon=True)
        reader.start()
        try:
            deadline = time.monotonic() + 180
            while not _healthy(url):
                assert proc.poll() is None and time.monotonic() < deadline, "".join(lines)
                time.sleep(0.5)
            stage_at_health = read_progress(db).stage
            assert stage_at_health != "done", "the dashboard answered only after the build"
            assert lines and lines[0].startswith(f"Dashboard: {url}"), lines[:3]
            with headless_chromium() as chromium:
                page = chromium.new_page(viewport={"width": 1400, "height": 1600})
                page.goto(url)
                page.get_by_role("heading", name="Demo build — in progress").wait_for(timeout=120_000)
                # Trajectories arrive per condition while the build goes on (no reload of the page).
                arriving = re.compile(r"read_gate/(baseline|full): ([1-9]\d*) of 4 trajectories")
                page.get_by_text(arriving).first.wait_for(timeout=300_000)
                assert read_progress(db).stage in ("runs", "judging")
                page.get_by_text(re.compile(r"Demo build finished")).wait_for(timeout=400_000)
                page.get_by_text(re.compile(r"rejected \d+ final\(s\) in \d+ trajectories")).first.wait_for(
                    timeout=60_000)
            assert read_progress(db).stage == "done"
        finally:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            reader.join(timeout=5)
    assert not _healthy(url), "the dashboard outlived `trajscope demo`"
    text = "".join(lines)
    assert "dashboard serving at" in text and "demo built in" in text, text
