"""SIGKILL a run midway, resume it: every question id exactly once in the log and in the warehouse."""
from __future__ import annotations

from pathlib import Path

import duckdb
from kill_support import kill_after_lines
from test_runs_support import answer_from_question, inputs

from trajscope.engine.runs import RunSpec, execute_run
from trajscope.format import encode, iter_trajectories

N = 40
CHILD = """
import sys
sys.path.insert(0, {tests!r})
from test_runs_support import inputs
from trajscope.engine.runs import RunSpec, execute_run
spec = RunSpec(**{spec!r})
execute_run(spec, inputs({n}))
"""


def spec_settings(mock_llm, tmp_path: Path) -> dict:
    return dict(dataset="synthetic", controller="one_call", model=mock_llm.model_spec, concurrency=4,
                out_dir=str(tmp_path / "runs"), db_path=str(tmp_path / "w.duckdb"), ingest_batch=4,
                cache=False, progress=False, timeout_s=10.0)


def test_sigkill_midway_then_resume_gives_each_id_exactly_once(mock_llm, tmp_path):
    mock_llm.responder = answer_from_question
    mock_llm.latency_s = 0.05
    settings = spec_settings(mock_llm, tmp_path)
    log_path = RunSpec(**settings).log_path()
    before = kill_after_lines(CHILD.format(tests=str(Path(__file__).parent), spec=settings, n=N), log_path, 12)
    assert 12 <= before < N
    # A kill can also land mid-write: leave a torn line for the resume to repair.
    with open(log_path, "ab") as fh:
        fh.write(encode(inputs(1).questions[0])[:30])

    mock_llm.latency_s = 0.0
    summary = execute_run(RunSpec(**settings, require_resume=True), inputs(N))
    assert summary.n_skipped == before and summary.n_completed == N - before and summary.truncated_bytes == 30
    assert f"repaired a torn last line (line {before + 1}, 30 bytes cut" in summary.line()

    ids = [d.trajectory.question.question_id for d in iter_trajectories(log_path)]
    assert sorted(ids) == [f"q{i:03d}" for i in range(N)]
    with duckdb.connect(settings["db_path"], read_only=True) as con:
        rows = con.sql("SELECT question_id, count(*) FROM trajectories GROUP BY 1 ORDER BY 1").fetchall()
    assert rows == [(f"q{i:03d}", 1) for i in range(N)]
