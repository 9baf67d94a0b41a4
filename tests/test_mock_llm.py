"""The scripted mock server: queue order, responders, recording, errors, native tool calls."""
from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from trajscope.engine.mock_llm import MockLLMServer, reply_error, reply_json, reply_tool_calls
from trajscope.engine.mock_llm.__main__ import scripted_agent


def post(server: MockLLMServer, body: dict, path: str = "/chat/completions") -> tuple[int, dict]:
    request = urllib.request.Request(server.base_url + path, data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def content(body: dict) -> str:
    return body["choices"][0]["message"]["content"]


def test_queue_then_responder_then_exhausted(mock_llm):
    mock_llm.enqueue("one", reply_json({"action": "final", "arguments": {"answer": "x"}}))
    assert content(post(mock_llm, {"messages": [{"role": "user", "content": "a"}]})[1]) == "one"
    assert json.loads(content(post(mock_llm, {"messages": []})[1]))["action"] == "final"
    status, body = post(mock_llm, {"messages": []})
    assert status == 500 and "exhausted" in body["error"]["message"]
    mock_llm.responder = lambda request: f"echo {request.messages[-1]['content']}"
    assert content(post(mock_llm, {"messages": [{"role": "user", "content": "hi"}]})[1]) == "echo hi"
    assert [r.index for r in mock_llm.chat_requests] == [0, 1, 2, 3]
    assert mock_llm.chat_requests[0].messages == [{"role": "user", "content": "a"}]
    assert mock_llm.pending == 0


def test_error_replies_carry_status_and_retry_after(mock_llm):
    mock_llm.enqueue(reply_error(429, "slow down", retry_after=1))
    status, body = post(mock_llm, {"messages": []})
    assert status == 429 and body["error"]["message"] == "slow down"


def test_native_tool_calls_shape(mock_llm):
    mock_llm.enqueue(reply_tool_calls([("search", {"query": "a"}), ("read", {"chunk_ids": ["c1"]})]))
    message = post(mock_llm, {"messages": []})[1]["choices"][0]["message"]
    calls = [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in message["tool_calls"]]
    assert calls == [("search", {"query": "a"}), ("read", {"chunk_ids": ["c1"]})]


def test_a_raising_responder_is_a_500_and_unknown_paths_404(mock_llm):
    mock_llm.responder = lambda request: 1 / 0
    status, body = post(mock_llm, {"messages": []})
    assert status == 500 and "ZeroDivisionError" in body["error"]["message"]
    assert post(mock_llm, {}, path="/embeddings")[0] == 404
    with urllib.request.urlopen(mock_llm.base_url + "/models", timeout=5) as response:
        assert json.loads(response.read())["data"][0]["id"] == "mock"


def test_scripted_agent_plays_fixed_length_episodes():
    respond = scripted_agent(3)
    server = MockLLMServer(respond)

    def name_after(turns: int) -> str:
        messages = [{"role": "assistant", "content": None}] * turns
        from trajscope.engine.mock_llm import RecordedRequest

        reply = respond(RecordedRequest("POST", "/v1/chat/completions", {}, {"messages": messages}))
        return reply.body["choices"][0]["message"]["tool_calls"][0]["function"]["name"]

    assert [name_after(t) for t in range(3)] == ["search", "search", "final"]
    with pytest.raises(RuntimeError):
        _ = server.base_url  # not started
