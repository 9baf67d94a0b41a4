"""A whole run against a loopback endpoint that answers with an enormous completion: the run stays under a
stated memory bound (the reply is never held whole), each trajectory is an error naming the reply cap, and
the log it wrote ingests; a trajectory too large for one log line is logged as an error naming that limit."""
from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import duckdb
import msgspec
from click.testing import CliRunner

from trajscope.cli import main
from trajscope.engine.mock_llm import MockLLMServer, reply_huge
from trajscope.engine.runs._log import TrajectoryLog
from trajscope.engine.runs._outcome import LOG_LINE_BUDGET
from trajscope.format import MAX_LINE_BYTES, ErrorStep, iter_trajectories

ROOT = Path(__file__).parents[2]
sys.path.insert(0, str(ROOT / "tests"))
from foundation_records import fixture_trajectories  # noqa: E402

# The stated bound on a whole `trajscope run` process while its endpoint streams a 4 GiB completion
# (the run reached 3.9 GB resident); measured: 294 MB (VmHWM, which does not carry the parent's peak).
RUN_PEAK_MB = 1024
HUGE_MB = 4096

RUN_SCRIPT = textwrap.dedent("""
    import json, sys
    from bench.process_memory import peak_rss_mb
    from click.testing import CliRunner
    from trajscope.cli import main
    result = CliRunner().invoke(main, ["run", *json.loads(sys.argv[1])])
    print(json.dumps({"exit_code": result.exit_code, "output": result.output[-3000:],
                      "peak_mb": peak_rss_mb()}))
""")


def test_a_run_against_an_enormous_completion_stays_bounded_and_its_log_ingests(tmp_path):
    with MockLLMServer(lambda request: reply_huge(HUGE_MB)) as server:
        db, out = tmp_path / "w.duckdb", tmp_path / "runs"
        args = ["--dataset", "demo", "--controller", "read_gate", "--condition", "baseline",
                "--model", server.model_spec, "--n", "2", "--seed", "1", "--concurrency", "1", "--db", str(db),
                "--out", str(out), "--retriever", "bm25", "--no-cache", "--no-progress", "--param", "max_turns=2"]
        done = subprocess.run([sys.executable, "-c", RUN_SCRIPT, json.dumps(args)], capture_output=True, text=True,
                              timeout=600, cwd=ROOT, env={**os.environ, "TRAJSCOPE_LLM_MAX_REPLY_MB": "1"})
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.splitlines()[-1])
    # Every question ended in the recorded error, so the run says the work was not done (exit 1), in one line.
    assert report["exit_code"] == 1, report["output"]
    assert "every question of" in report["output"] and "Traceback" not in report["output"]
    assert report["peak_mb"] < RUN_PEAK_MB, report
    [log] = list(out.glob("*.jsonl"))
    assert max(len(line) for line in log.read_bytes().splitlines()) < MAX_LINE_BYTES
    trajectories = [d.trajectory for d in iter_trajectories(log)]
    assert len(trajectories) == 2
    for t in trajectories:
        assert t.end_reason == "error" and "too_large" in (t.error or ""), t.error
        assert "cap of 1 MB (max_reply_mb)" in t.error
        assert t.run.model_settings.max_reply_mb == 1.0  # the bound is in the run's recorded settings
    with duckdb.connect(str(db), read_only=True) as con:  # the run's own ingest took every line
        assert con.execute("SELECT count(*) FROM trajectories WHERE end_reason = 'error'").fetchall() == [(2,)]
    again = CliRunner().invoke(main, ["ingest", str(log), "--db", str(tmp_path / "again.duckdb")])
    assert again.exit_code == 0 and "Traceback" not in again.output, again.output
    print(json.dumps({"peak_mb": report["peak_mb"], "errors": [t.error for t in trajectories]}, indent=1))


def test_a_trajectory_too_large_for_a_log_line_is_logged_as_an_error_naming_the_limit(tmp_path):
    base = fixture_trajectories()[0]
    size_mb = MAX_LINE_BYTES // 2**20 + 6
    huge = msgspec.structs.replace(base, steps=[*base.steps, ErrorStep(error_type="tool_error",
                                                                      message="a" * (size_mb * 2**20))])
    log_path = tmp_path / "run.jsonl"
    log = TrajectoryLog(log_path)
    try:
        written = asyncio.run(log.append(huge))
    finally:
        log.close()
    assert written.end_reason == "error" and written.error.startswith("log_line_too_large: ")
    assert f"over the run log's line budget of {LOG_LINE_BUDGET / 2**20:,.1f} MB" in written.error
    assert f"its {len(huge.steps)} steps were not kept" in written.error
    assert written.trajectory_id == huge.trajectory_id and written.question == huge.question
    lines = log_path.read_bytes().splitlines()
    assert len(lines) == 1 and len(lines[0]) < MAX_LINE_BYTES
    result = CliRunner().invoke(main, ["ingest", str(log_path), "--db", str(tmp_path / "w.duckdb")])
    assert result.exit_code == 0, result.output
    with duckdb.connect(str(tmp_path / "w.duckdb"), read_only=True) as con:
        assert con.execute("SELECT end_reason FROM trajectories").fetchall() == [("error",)]
