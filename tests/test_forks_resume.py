"""A batch fork SIGKILLed midway and resumed from the CLI: every child exactly once, in the log and the warehouse.

On the demo dataset with the BM25 retriever, rebuilt from the parent's run record (no inputs injected)."""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
from click.testing import CliRunner

from engine.forks import fork_run_id
from engine.mock_llm import reply_tool_call
from engine.runs import RunSpec, execute_run
from trajscope.cli import main as cli
from trajscope.format import iter_trajectories

N = 12
CHILD = """
from engine.forks import fork_many, load_log
fork_many(load_log({log!r}), "first_read", "inject_gold", out_dir={out!r}, cache_path={cache!r}, db_path={db!r},
          concurrency=2)
"""


def agent(request):
    """search the question -> read the top hit -> a wrong answer."""
    tools = [m for m in request.messages if m["role"] == "tool"]
    if not tools:
        return reply_tool_call("search", {"query": request.messages[1]["content"][-200:]})
    if len(tools) == 1:
        return reply_tool_call("read", {"chunk_id": re.search(r"\[1\] (\S+)", tools[0]["content"]).group(1)})
    return reply_tool_call("final", {"answer": "not sure"})


def test_a_killed_batch_fork_resumes_without_losing_or_duplicating_a_child(mock_llm, tmp_path):
    mock_llm.responder = agent
    cache, out, db = tmp_path / "cache.sqlite", tmp_path / "forks", tmp_path / "w.duckdb"
    spec = RunSpec(dataset="demo", controller="read_gate", condition="baseline", model=mock_llm.model_spec,
                   retriever="bm25", n=N, out_dir=tmp_path / "runs", cache_path=cache, progress=False, concurrency=4)
    parent_log = execute_run(spec).log_path
    parents = [d.trajectory for d in iter_trajectories(parent_log)]
    assert len(parents) == N
    run_id = parents[0].run.run_id
    fork_log = out / f"{fork_run_id(run_id, 'inject_gold', 'first_read')}.jsonl"

    mock_llm.latency_s = 0.4  # wide enough that a loaded machine cannot finish every child before the kill
    code = CHILD.format(log=str(parent_log), out=str(out), cache=str(cache), db=str(db))
    child = subprocess.Popen([sys.executable, "-c", code], cwd=Path(__file__).parent.parent,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if fork_log.exists() and fork_log.read_bytes().count(b"\n") >= 3:
                break
            assert child.poll() is None, child.stderr.read().decode()[-2000:]
            time.sleep(0.02)
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait()
    assert child.returncode == -signal.SIGKILL
    before = fork_log.read_bytes().count(b"\n")
    assert 3 <= before < N
    with open(fork_log, "ab") as fh:  # a kill can land mid-write: a torn line for the resume to repair
        fh.write(b'{"schema_version": "1", "trajectory_id": "torn')

    mock_llm.latency_s = 0.0
    result = CliRunner().invoke(cli, ["fork", "--runs", run_id, "--log", str(parent_log), "--at", "first_read",
                                      "-i", "inject_gold", "--cache-path", str(cache), "--out", str(out),
                                      "--db", str(db)])
    assert result.exit_code == 0, result.output
    assert f"{N - before} new, {before} resumed" in result.output and "repaired a torn last line" in result.output
    children = [d.trajectory for d in iter_trajectories(fork_log)]
    assert sorted(c.fork.parent_trajectory_id for c in children) == sorted(p.trajectory_id for p in parents)
    assert all(c.fork.prefix_model_calls == 0 and not (c.error or "").startswith("fork failed") for c in children), \
        [(c.fork.prefix_model_calls, c.error) for c in children]
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.sql("SELECT parent_trajectory_id, count(*) FROM trajectory_forks GROUP BY 1 ORDER BY 1").fetchall()
    assert rows == [(p.trajectory_id, 1) for p in sorted(parents, key=lambda t: t.trajectory_id)]
