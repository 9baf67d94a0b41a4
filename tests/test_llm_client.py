"""ChatModel against the mock server: request shape, parsing, retries, typed errors, cost, cache."""
from __future__ import annotations

import asyncio
import json

import pytest

from trajscope.engine.llm import ChatModel, ModelConfig, ModelError, ResponseCache, load_price_table, resolve_model
from trajscope.engine.mock_llm import (
    MockLLMServer,
    reply_error,
    reply_invalid_body,
    reply_malformed,
    reply_stall,
    reply_text,
    reply_tool_call,
)

SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}
USER = [{"role": "user", "content": "Who built the Harlow Bridge?"}]


def config_for(server: MockLLMServer, **changes) -> ModelConfig:
    base = resolve_model(server.model_spec, backoff_base_s=0.01, backoff_max_s=0.02, timeout_s=5.0)
    return base.with_overrides(**changes)


def complete(config: ModelConfig, *args, cache: ResponseCache | None = None, **kwargs):
    async def go():
        async with ChatModel(config, cache=cache) as model:
            return await model.complete(*args, **kwargs), model.usage

    return asyncio.run(go())


def test_text_completion_tokens_cost_and_decoding_passthrough(mock_llm):
    mock_llm.enqueue(reply_text("Denmore Works", tokens_in=1000, tokens_out=500))
    config = config_for(mock_llm, temperature=0.3, max_tokens=77, reasoning_effort="low", seed=5,
                        prices={"mock": (0.5, 2.0)})
    completion, usage = complete(config, USER)
    assert completion.text == "Denmore Works"
    assert (completion.tokens_in, completion.tokens_out) == (1000, 500)
    assert completion.cost_usd == pytest.approx(1000 / 1000 * 0.5 + 500 / 1000 * 2.0)
    assert completion.cached is False and completion.latency_ms > 0
    assert completion.raw["choices"][0]["message"]["content"] == "Denmore Works"
    body = mock_llm.chat_requests[0].body
    assert body["messages"] == USER
    assert (body["temperature"], body["max_tokens"], body["reasoning_effort"], body["seed"]) == (0.3, 77, "low", 5)
    assert usage.requests == 1 and usage.cost_usd == pytest.approx(completion.cost_usd)


def test_unknown_model_price_gives_no_cost(mock_llm):
    mock_llm.enqueue(reply_text("x"))
    completion, _ = complete(config_for(mock_llm, prices={}), USER)
    assert completion.cost_usd is None


def test_native_tool_calls_are_parsed_and_tools_sent(mock_llm):
    tools = [{"type": "function", "function": {"name": "search", "parameters": {"type": "object"}}}]
    mock_llm.enqueue(reply_tool_call("search", {"query": "Harlow Bridge"}))
    completion, _ = complete(config_for(mock_llm), USER, tools=tools)
    assert [(c.name, c.arguments) for c in completion.tool_calls] == [("search", {"query": "Harlow Bridge"})]
    assert not completion.malformed
    assert mock_llm.chat_requests[0].body["tools"] == tools


def test_malformed_tool_arguments_are_surfaced_not_raised(mock_llm):
    mock_llm.enqueue(reply_tool_call("search", '{"query": "Harl'))
    completion, _ = complete(config_for(mock_llm), USER, tools=[])
    call = completion.tool_calls[0]
    assert call.arguments == {} and call.raw_arguments == '{"query": "Harl'
    assert call.arguments_error is not None and completion.malformed


@pytest.mark.parametrize(("schema_format", "expected"), [
    ("json_object", {"type": "json_object", "schema": SCHEMA}),
    ("json_schema", {"type": "json_schema", "json_schema": {"name": "action", "schema": SCHEMA}}),
])
def test_structured_output_request_forms(mock_llm, schema_format, expected):
    mock_llm.enqueue(reply_text('{"answer": "1921"}'))
    completion, _ = complete(config_for(mock_llm, schema_format=schema_format), USER, response_schema=SCHEMA)
    assert mock_llm.chat_requests[0].body["response_format"] == expected
    assert completion.parsed == {"answer": "1921"} and completion.parse_error is None


def test_malformed_json_action_is_surfaced(mock_llm):
    mock_llm.enqueue(reply_malformed())
    completion, _ = complete(config_for(mock_llm), USER, response_schema=SCHEMA)
    assert completion.parsed is None
    assert completion.parse_error.startswith("not valid JSON") and completion.malformed
    assert completion.text == '{"action": "search", "arguments": {"query": '


def test_rate_limit_and_server_errors_are_retried_then_succeed(mock_llm):
    mock_llm.enqueue(reply_error(429), reply_error(500), reply_error(503), reply_text("ok"))
    completion, usage = complete(config_for(mock_llm), USER)
    assert completion.text == "ok"
    assert len(mock_llm.chat_requests) == 4 and usage.retries == 3


@pytest.mark.parametrize(("status", "kind"), [(429, "rate_limit"), (500, "server_error")])
def test_persistent_errors_raise_typed_model_error_after_three_retries(mock_llm, status, kind):
    mock_llm.enqueue(*[reply_error(status)] * 10)
    with pytest.raises(ModelError) as info:
        complete(config_for(mock_llm), USER)
    assert info.value.kind == kind and info.value.status == status and info.value.attempts == 4
    assert len(mock_llm.chat_requests) == 4


def test_timeouts_are_retried_then_raised(mock_llm):
    mock_llm.enqueue(*[reply_stall(3.0)] * 3)
    with pytest.raises(ModelError) as info:
        complete(config_for(mock_llm, timeout_s=0.2, max_retries=2), USER)
    assert info.value.kind == "timeout" and info.value.attempts == 3
    assert len(mock_llm.chat_requests) == 3


def test_client_errors_are_not_retried(mock_llm):
    mock_llm.enqueue(reply_error(400, "bad schema"), reply_text("never"))
    with pytest.raises(ModelError) as info:
        complete(config_for(mock_llm), USER)
    assert info.value.kind == "bad_request" and len(mock_llm.chat_requests) == 1


def test_a_non_json_body_is_a_model_error(mock_llm):
    mock_llm.enqueue(reply_invalid_body())
    with pytest.raises(ModelError):
        complete(config_for(mock_llm, max_retries=0), USER)


def test_cache_hit_makes_no_request_and_keeps_the_key_out(mock_llm, tmp_path):
    secret = "sk-test-SECRET-5f2a9c"
    cache_path = tmp_path / "cache.sqlite"
    config = config_for(mock_llm, api_key=secret, prices={"mock": (1.0, 1.0)})
    mock_llm.enqueue(reply_text("first", tokens_in=10, tokens_out=10), reply_text("second"))

    first, _ = complete(config, USER, cache=ResponseCache(cache_path), response_schema=SCHEMA)
    again, usage = complete(config, USER, cache=ResponseCache(cache_path), response_schema=SCHEMA)
    assert len(mock_llm.chat_requests) == 1
    assert again.cached and not first.cached and usage.requests == 0 and usage.cache_hits == 1
    assert (again.text, again.tokens_in, again.cost_usd) == ("first", 10, first.cost_usd)
    assert mock_llm.chat_requests[0].headers["authorization"] == f"Bearer {secret}"

    changed, _ = complete(config.with_overrides(temperature=0.7), USER, cache=ResponseCache(cache_path),
                          response_schema=SCHEMA)
    assert changed.text == "second" and len(mock_llm.chat_requests) == 2

    for path in tmp_path.iterdir():
        assert secret.encode() not in path.read_bytes()
    assert secret not in repr(config)


def test_errors_are_never_cached(mock_llm, tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    mock_llm.enqueue(reply_error(400), reply_text("fine"))
    with pytest.raises(ModelError):
        complete(config_for(mock_llm), USER, cache=cache)
    completion, _ = complete(config_for(mock_llm), USER, cache=ResponseCache(tmp_path / "c.sqlite"))
    assert completion.text == "fine" and not completion.cached


def test_resolve_model_specs(monkeypatch):
    local = resolve_model("local")
    assert local.local and local.protocol == "json" and local.schema_format == "json_object"
    assert local.base_url is None and local.settings().base_url is None
    mock = resolve_model("mock:http://127.0.0.1:9/")
    assert mock.base_url == "http://127.0.0.1:9/v1" and mock.name == "mock"
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8000/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    remote = resolve_model("gpt-4o-mini", temperature=0.0, reasoning_effort=None)
    assert remote.base_url == "http://127.0.0.1:8000/v1" and remote.resolved_api_key() == "sk-env"
    assert remote.price() == (0.00015, 0.0006)
    assert resolve_model("gpt-4o-mini-2024-07-18").price() == (0.00015, 0.0006)  # prefix match
    assert "sk-env" not in json.dumps(__import__("msgspec").to_builtins(remote.settings()))


def test_price_table_file(tmp_path):
    (tmp_path / "p.yaml").write_text("my-model: [0.001, 0.002]\n")
    assert load_price_table(tmp_path / "p.yaml") == {"my-model": (0.001, 0.002)}
    (tmp_path / "bad.json").write_text('{"m": [1]}')
    with pytest.raises(ValueError, match="field m"):
        load_price_table(tmp_path / "bad.json")
