"""Structured replies that can close: every free string of a grammar-constrained schema carries a maxLength sized
to max_tokens, and a reply still cut inside its JSON is recorded as truncated and answered once through the
shorter answer schema, never retried as the same request (a loopback endpoint counts the requests)."""
from __future__ import annotations

import json
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from trajscope.engine.controllers._actions import ANSWER_SCHEMA, ActionSpace
from trajscope.engine.environment import tool_schemas
from trajscope.engine.llm import ModelConfig
from trajscope.engine.llm._client import ChatModel
from trajscope.engine.llm._schema_bounds import SKELETON_TOKENS, TOKENS_PER_PROPERTY, bound_strings


def _strings(schema, out):
    """Every string schema inside schema (enum and const ones too), in order."""
    if isinstance(schema, dict):
        if schema.get("type") == "string":
            out.append(schema)
        for value in schema.values():
            _strings(value, out)
    elif isinstance(schema, list):
        for value in schema:
            _strings(value, out)
    return out


def _properties(schema) -> int:
    if isinstance(schema, dict):
        own = len(schema["properties"]) if isinstance(schema.get("properties"), dict) else 0
        return own + sum(_properties(v) for v in schema.values())
    return sum(_properties(v) for v in schema) if isinstance(schema, list) else 0


@pytest.mark.parametrize("max_tokens", [96, 256, 1024])
def test_every_free_string_fits_max_tokens_with_its_branch(max_tokens):
    schema = ActionSpace(tool_schemas("read_gate", "tools")).json_schema(["demo:4", "demo:9"])
    bounded = bound_strings(schema, max_tokens)
    for branch in bounded["anyOf"]:
        free = [s for s in _strings(branch, []) if not {"enum", "const"} & s.keys()]
        assert all(isinstance(s.get("maxLength"), int) and s["maxLength"] >= 1 for s in free), branch
        # a character costs at most one token; what is left of max_tokens holds the braces, keys and options
        assert sum(s["maxLength"] for s in free) <= max_tokens - SKELETON_TOKENS - TOKENS_PER_PROPERTY * _properties(
            branch)
    enums = [s for s in _strings(bounded, []) if "enum" in s]
    assert enums and all("maxLength" not in s for s in enums)  # chunk ids stay an exact choice
    assert bound_strings(ANSWER_SCHEMA, 96)["properties"]["answer"]["maxLength"] == 96 - SKELETON_TOKENS - 8


def test_a_smaller_own_bound_is_kept():
    schema = {"type": "object", "properties": {"note": {"type": "string", "maxLength": 5}}}
    assert bound_strings(schema, 4096)["properties"]["note"]["maxLength"] == 5


def test_only_a_grammar_endpoint_gets_the_bounds():
    schema = ActionSpace(tool_schemas("read_gate", "tools")).json_schema()
    local = ChatModel(ModelConfig(name="m", base_url="http://127.0.0.1:9/v1", api_key="none",
                                  schema_format="json_object", max_tokens=96))
    sent = local.build_request([{"role": "user", "content": "q"}], response_schema=schema)["response_format"]
    assert all("maxLength" in s for s in _strings(sent["schema"], []) if not {"enum", "const"} & s.keys())
    remote = ChatModel(ModelConfig(name="m", base_url="http://127.0.0.1:9/v1", api_key="none", max_tokens=96))
    sent = remote.build_request([{"role": "user", "content": "q"}], response_schema=schema)["response_format"]
    assert sent["json_schema"]["schema"] == schema


class _CutReplies(BaseHTTPRequestHandler):
    """Every action request is answered with JSON cut at max_tokens; the answer request with an answer."""

    def log_message(self, *args) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        schema = json.dumps(body.get("response_format", {}))
        answering = '"answer"' in schema and '"arguments"' not in schema
        self.server.requests.append("answer" if answering else "action")  # type: ignore[attr-defined]
        content, finish = ('{"answer": "Stenwick"}', "stop") if answering else \
            ('{"action": "search", "arguments": {"query": "the the the the the', "length")
        reply = {"id": "x", "object": "chat.completion", "created": 0, "model": "m",
                 "choices": [{"index": 0, "finish_reason": finish,
                              "message": {"role": "assistant", "content": content}}],
                 "usage": {"prompt_tokens": 10, "completion_tokens": 96, "total_tokens": 106}}
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def test_a_reply_cut_inside_its_json_is_recorded_as_truncated_and_not_retried(tmp_path):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _CutReplies)
    server.requests = []
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        child = subprocess.run(
            [sys.executable, "-m", "trajscope", "run", "--dataset", "demo", "--controller", "read_gate", "--model", "m",
             "--base-url", f"http://127.0.0.1:{server.server_address[1]}/v1", "--protocol", "json", "--n", "1",
             "--no-ingest", "--out", "runs"], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    finally:
        server.shutdown()
        server.server_close()
    assert "Traceback" not in child.stderr, child.stderr
    logs = list(Path(tmp_path / "runs").glob("*.jsonl"))
    logged = [json.loads(line) for log in logs for line in log.read_text().splitlines()]
    assert len(logged) == 1, child.stdout + child.stderr
    trajectory = logged[0]
    cut = [s for s in trajectory["steps"] if s.get("error_type") == "truncated_reply"]
    assert len(cut) == 1 and "reached max_tokens inside its JSON" in cut[0]["message"]
    assert server.requests == ["action", "answer"]  # one cut reply, then the answer alone: no blind retry
    assert trajectory["end_reason"] == "forced_answer" and trajectory["final_answer"] == "Stenwick"
    assert trajectory["metadata"]["forced_by"] == "truncated_reply"
