"""execute_run with a tiny controller against the mock server: logging, errors, judging, resume, ingest."""
from __future__ import annotations

import duckdb
import pytest
from test_runs_support import answer_from_question, inputs

from trajscope.engine.mock_llm import reply_error
from trajscope.engine.runs import RunSetupError, RunSpec, execute_run, select_questions
from trajscope.format import iter_trajectories


def spec_for(mock_llm, tmp_path, **changes) -> RunSpec:
    settings = dict(dataset="synthetic", controller="one_call", condition="baseline", model=mock_llm.model_spec,
                    n=None, seed=0, concurrency=4, out_dir=tmp_path / "runs", cache=False, progress=False,
                    timeout_s=5.0)
    settings.update(changes)
    return RunSpec(**settings)


def logged(summary):
    return [d.trajectory for d in iter_trajectories(summary.log_path)]


def test_every_question_logged_once_with_judgments_and_run_record(mock_llm, tmp_path):
    mock_llm.responder = answer_from_question
    summary = execute_run(spec_for(mock_llm, tmp_path), inputs(12))
    trajectories = logged(summary)
    assert sorted(t.question.question_id for t in trajectories) == [f"q{i:03d}" for i in range(12)]
    assert summary.n_completed == 12 and summary.n_errors == 0 and summary.n_skipped == 0
    assert len({t.run.run_id for t in trajectories}) == 1 and trajectories[0].run.model == "mock"
    assert all(t.trajectory_id == f"{summary.run_id}::{t.question.question_id}" for t in trajectories)
    em = {t.question.question_id: next(j.score for j in t.judgments if j.judge == "em") for t in trajectories}
    assert em == {f"q{i:03d}": float(i % 2 == 0) for i in range(12)}
    assert {j.judge for j in trajectories[0].judgments} >= {"em", "f1", "contain"}


def test_controller_exceptions_and_model_errors_become_error_trajectories(mock_llm, tmp_path):
    def responder(request):
        return reply_error(429) if "question 3" in request.messages[-1]["content"] else "fine"

    mock_llm.responder = responder
    spec = spec_for(mock_llm, tmp_path)
    from trajscope.engine.llm import resolve_model

    config = resolve_model(spec.model, backoff_base_s=0.01, backoff_max_s=0.02)
    from trajscope.engine.runs import execute_run as run

    summary = run(spec, inputs(6, boom=(1,)), model_config=config)
    by_id = {t.question.question_id: t for t in logged(summary)}
    assert len(by_id) == 6 and summary.n_errors == 2
    boom, limited = by_id["q001"], by_id["q003"]
    assert boom.end_reason == "error" and boom.steps[0].error_type == "RuntimeError"
    assert limited.end_reason == "error" and limited.steps[0].error_type == "model_error:rate_limit"
    assert "after 4 attempt(s)" in limited.error
    assert sum("question 3" in r.messages[-1]["content"] for r in mock_llm.chat_requests) == 4
    assert all(by_id[q].end_reason == "final" for q in ("q000", "q002", "q004", "q005"))


def test_second_start_resumes_and_skips_finished_ids(mock_llm, tmp_path):
    mock_llm.responder = answer_from_question
    first = execute_run(spec_for(mock_llm, tmp_path, n=5, seed=1), inputs(20))
    requests_after_first = len(mock_llm.chat_requests)
    again = execute_run(spec_for(mock_llm, tmp_path, n=5, seed=1, require_resume=True), inputs(20))
    assert again.run_id == first.run_id and again.n_skipped == 5 and again.n_completed == 0
    assert len(mock_llm.chat_requests) == requests_after_first
    assert len(logged(again)) == 5


def test_require_resume_without_a_log_is_a_clear_error(mock_llm, tmp_path):
    with pytest.raises(RunSetupError, match="nothing to resume"):
        execute_run(spec_for(mock_llm, tmp_path, require_resume=True), inputs(2))


def test_trajectories_are_ingested_into_the_warehouse(mock_llm, tmp_path):
    mock_llm.responder = answer_from_question
    db = tmp_path / "w.duckdb"
    summary = execute_run(spec_for(mock_llm, tmp_path, db_path=db, ingest_batch=3), inputs(7))
    assert summary.n_ingested == 7 and summary.ingest_error is None
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.sql("SELECT question_id FROM trajectories ORDER BY question_id").fetchall()
    assert [r[0] for r in rows] == [f"q{i:03d}" for i in range(7)]


def test_key_never_reaches_log_cache_or_warehouse(mock_llm, tmp_path, monkeypatch):
    secret = "sk-live-DO-NOT-LOG-91c3"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    mock_llm.responder = answer_from_question
    from trajscope.engine.llm import resolve_model

    spec = spec_for(mock_llm, tmp_path, cache=True, cache_path=tmp_path / "cache.sqlite", db_path=tmp_path / "w.duckdb")
    config = resolve_model("gpt-4o-mini", base_url=mock_llm.base_url)
    summary = execute_run(spec, inputs(3), model_config=config)
    assert summary.n_completed == 3
    assert all(r.headers["authorization"] == f"Bearer {secret}" for r in mock_llm.chat_requests)
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.suffix == ".jsonl" for p in files) and any(p.name == "cache.sqlite" for p in files)
    for path in files:
        assert secret.encode() not in path.read_bytes(), path


def test_run_id_is_deterministic_and_selection_is_paired():
    a = RunSpec(dataset="demo", controller="read_gate", condition="gate", model="local", n=10, seed=3)
    b = RunSpec(dataset="demo", controller="read_gate", condition="gate", model="local", n=10, seed=3,
                concurrency=9, out_dir="elsewhere")
    c = RunSpec(dataset="demo", controller="read_gate", condition="gate", model="local", n=10, seed=4)
    assert a.resolved_run_id() == b.resolved_run_id() != c.resolved_run_id()
    assert a.resolved_run_id().startswith("demo-read_gate-gate-local-n10-s3-")
    qs = inputs(50).questions
    picked = [q.question_id for q in select_questions(qs, 10, 3)]
    assert picked == [q.question_id for q in select_questions(qs, 10, 3)] and len(set(picked)) == 10
    assert picked == sorted(picked)  # dataset order is kept
    assert [q.question_id for q in select_questions(qs, None, 0, ["q007", "q001"])] == ["q007", "q001"]
    with pytest.raises(ValueError, match="q999"):
        select_questions(qs, None, 0, ["q999"])


def test_a_busy_warehouse_never_stops_the_run_and_is_retried(mock_llm, tmp_path, monkeypatch):
    import trajscope.engine.runs._warehouse_sink as sink_module
    from trajscope.warehouse import ingest_log_slice, open_readonly

    mock_llm.responder = answer_from_question
    calls: list[int] = []

    def flaky_ingest(db_path, log_path, *, start, first_line):
        calls.append(start)
        if len(calls) <= 2:
            raise RuntimeError("database is locked by another process")
        return ingest_log_slice(db_path, log_path, start=start, first_line=first_line)

    monkeypatch.setattr(sink_module, "_ingest_function", lambda: flaky_ingest)
    db = tmp_path / "w.duckdb"
    summary = execute_run(spec_for(mock_llm, tmp_path, db_path=db, ingest_batch=2, concurrency=1), inputs(5))
    assert summary.n_completed == 5 and summary.ingest_error is None and summary.n_ingested == 5
    assert calls[:3] == [0, 0, 0]  # a failed load is retried from the same offset
    with open_readonly(db) as con:
        stored = con.execute("SELECT question_id FROM trajectories ORDER BY 1").fetchall()
    assert [q for (q,) in stored] == [f"q{i:03d}" for i in range(5)]

    monkeypatch.setattr(sink_module, "_ingest_function", lambda: (lambda db, path, **kw: 1 / 0))
    monkeypatch.setattr(sink_module.asyncio, "sleep", _no_sleep)
    down = execute_run(spec_for(mock_llm, tmp_path, db_path=tmp_path / "w.duckdb", run_id="other"), inputs(3))
    assert down.n_completed == 3 and len(logged(down)) == 3
    assert down.n_ingested == 0 and "ZeroDivisionError" in down.ingest_error


def test_the_sink_loads_the_bytes_the_log_wrote(mock_llm, tmp_path):
    from trajscope.warehouse import open_readonly

    mock_llm.responder = answer_from_question
    db = tmp_path / "w.duckdb"
    summary = execute_run(spec_for(mock_llm, tmp_path, db_path=db, ingest_batch=2, concurrency=2), inputs(5))
    lines = summary.log_path.read_bytes().splitlines()
    with open_readonly(db) as con:
        files = con.execute("SELECT DISTINCT source_file FROM trajectories").fetchall()
        hashes = sorted(h for (h,) in con.execute("SELECT record_hash FROM trajectories").fetchall())
    import hashlib

    assert files == [(str(summary.log_path),)]  # the run's own log, not a temporary re-encoding
    assert hashes == sorted(hashlib.blake2b(line.strip(), digest_size=16).hexdigest() for line in lines)


async def _no_sleep(seconds: float) -> None:
    return None


def test_api_key_env_names_the_variable_that_holds_the_key(mock_llm, tmp_path, monkeypatch):
    monkeypatch.setenv("MY_PROVIDER_KEY", "sk-from-named-var")
    mock_llm.responder = answer_from_question
    spec = spec_for(mock_llm, tmp_path, model="gpt-4o-mini", base_url=mock_llm.base_url, api_key_env="MY_PROVIDER_KEY")
    summary = execute_run(spec, inputs(1))
    assert summary.n_completed == 1
    assert mock_llm.chat_requests[0].headers["authorization"] == "Bearer sk-from-named-var"
    assert b"sk-from-named-var" not in summary.log_path.read_bytes()
