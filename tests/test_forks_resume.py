"""A batch fork SIGKILLed midway and resumed from the CLI: every child exactly once, in the log and the warehouse.

On the demo dataset with the BM25 retriever, rebuilt from the parent's run record (no inputs injected)."""
from __future__ import annotations

import re

import duckdb
from click.testing import CliRunner
from kill_support import kill_after_lines

from trajscope.cli import main as cli
from trajscope.engine.forks import fork_run_id
from trajscope.engine.mock_llm import reply_tool_call
from trajscope.engine.runs import RunSpec, execute_run
from trajscope.format import iter_trajectories

N = 12
CHILD = """
from trajscope.engine.forks import fork_many, load_log
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
    before = kill_after_lines(code, fork_log, 3)
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
    # Each child's prefix (step 0, the search) was answered from the cache: the endpoint saw the search
    # request only for the N parents, never again, in the killed batch or the resume.
    assert [(c.fork.prefix_cache_hits, c.error) for c in children] == [(1, None)] * N
    assert sum(1 for r in mock_llm.chat_requests if not any(m["role"] == "tool" for m in r.messages)) == N
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.sql("SELECT parent_trajectory_id, count(*) FROM trajectory_forks GROUP BY 1 ORDER BY 1").fetchall()
    assert rows == [(p.trajectory_id, 1) for p in sorted(parents, key=lambda t: t.trajectory_id)]
