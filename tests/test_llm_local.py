"""The embedded model: locating the GGUF, a clear start-up failure, and (slow) a real end-to-end run."""
from __future__ import annotations

import json

import pytest

from trajscope.format import ErrorStep, iter_trajectories

from engine.llm import LocalModelError, LocalModelServer, find_local_gguf
from engine.runs import RunSpec, execute_run


def test_gguf_is_found_inside_the_package():
    path = find_local_gguf()
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf" and path.stat().st_size > 50_000_000


def test_a_server_that_cannot_start_fails_with_its_output_tail(tmp_path):
    bogus = tmp_path / "not-a-model.gguf"
    bogus.write_bytes(b"this is not gguf")
    server = LocalModelServer(bogus, startup_timeout_s=60)
    with pytest.raises(LocalModelError, match="exited with code") as info:
        server.start()
    assert "not-a-model.gguf" in str(info.value)
    with pytest.raises(LocalModelError, match="not running"):
        _ = server.base_url


@pytest.mark.slow
def test_embedded_model_runs_two_demo_questions_end_to_end(tmp_path):
    spec = RunSpec(dataset="demo", controller="read_gate", condition="baseline", model="local", n=2, seed=0,
                   concurrency=1, max_tokens=64, params={"max_turns": 3}, out_dir=tmp_path / "runs",
                   db_path=tmp_path / "w.duckdb", cache_path=tmp_path / "cache.sqlite", progress=False)
    summary = execute_run(spec)
    assert summary.n_completed == 2 and summary.n_ingested == 2 and summary.model_requests >= 2
    trajectories = [d.trajectory for d in iter_trajectories(summary.log_path)]
    assert len(trajectories) == 2
    valid_actions = []
    for t in trajectories:
        assert t.run.model == "smollm2-135m-instruct" and t.run.model_settings.protocol == "json"
        assert t.run.model_settings.base_url is None  # the embedded server's random port is not a setting
        model_steps = [s for s in t.steps if s.tokens_in]
        assert model_steps and all(s.tokens_out > 0 and s.latency_ms > 0 for s in model_steps)
        for step in model_steps:
            # Grammar-constrained output is a JSON action unless max_tokens cut it short; a cut one
            # must be recorded as an ErrorStep, never lost or raised.
            try:
                valid_actions.append(json.loads(step.raw))
            except json.JSONDecodeError:
                assert isinstance(step, ErrorStep), step
        assert t.end_reason in {"final", "forced_answer", "budget"}
    assert any(a.get("action") in {"search", "read", "final"} for a in valid_actions)

    again = execute_run(spec)  # same run again: resumes, nothing to do
    assert again.n_skipped == 2 and again.n_completed == 0 and again.model_requests == 0
