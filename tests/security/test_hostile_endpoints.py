"""Hostile model endpoints on loopback: a huge reply stops at the byte cap (never held whole), a dripping or
hanging one at the request deadline, garbage, 5xx and a key echo end in one typed error with no key in it."""
from __future__ import annotations

import asyncio
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from bench.process_memory import peak_rss_mb, reset_peak_rss
from trajscope.engine.llm import ModelConfig, ModelError
from trajscope.engine.llm._client import ChatModel

KEY = "sk-test-HOSTILE0123456789abcdef"
OK_BODY = {"id": "x", "object": "chat.completion", "created": 0, "model": "m",
           "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "fine"}}],
           "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
HUGE_MB = 256


class _Hostile(BaseHTTPRequestHandler):
    mode = "ok"

    def log_message(self, *args) -> None:  # quiet
        pass

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        self.rfile.read(int(self.headers.get("content-length") or 0))
        mode = self.server.mode  # type: ignore[attr-defined]
        try:
            if mode == "huge":  # chunked, no length: 256 MB of one endless completion
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                chunk = b"a" * 65536
                prefix = b'{"choices":[{"message":{"content":"'
                self.wfile.write(b"%x\r\n%s\r\n" % (len(prefix), prefix))
                for _ in range(HUGE_MB * 16):
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.write(b"0\r\n\r\n")
            elif mode == "declared-huge":
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(HUGE_MB * 2**20))
                self.end_headers()
                self.wfile.write(b"{")
            elif mode == "drip":  # one byte every 0.2 s, for ever: each read is well inside the read timeout
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", "1000")
                self.end_headers()
                while not self.server.stopping.is_set():  # type: ignore[attr-defined]
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    time.sleep(0.2)
            elif mode == "hang":
                self.server.stopping.wait(60)  # type: ignore[attr-defined]
            elif mode == "garbage":
                self._send(200, b"\x00\xffnot json at all")
            elif mode == "5xx":
                self._send(503, b'{"error": {"message": "overloaded"}}')
            elif mode == "echo":  # the key sent back inside the error
                self._send(401, json.dumps({"error": {"message": f"bad key {self.headers.get('authorization')}"}})
                           .encode())
            else:
                self._send(200, json.dumps(OK_BODY).encode())
        except (BrokenPipeError, ConnectionResetError):
            pass

    def _send(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def hostile():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Hostile)
    server.daemon_threads = True
    server.mode = "ok"
    server.stopping = threading.Event()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.stopping.set()
    server.shutdown()
    server.server_close()


def _ask(server, mode: str, **config) -> tuple[ModelError | None, float]:
    server.mode = mode
    cfg = ModelConfig(name="m", base_url=f"http://127.0.0.1:{server.server_address[1]}/v1", api_key=KEY,
                      max_retries=0, timeout_s=30.0, **config)

    async def go():
        async with ChatModel(cfg) as model:
            return await model.complete([{"role": "user", "content": "hi"}])

    started = time.monotonic()
    try:
        asyncio.run(go())
    except ModelError as exc:
        return exc, time.monotonic() - started
    return None, time.monotonic() - started


def test_a_fine_endpoint_answers_and_the_bounds_are_in_the_settings(hostile):
    error, _ = _ask(hostile, "ok", max_reply_mb=1.0, deadline_s=10.0)
    assert error is None
    settings = ModelConfig(name="m", max_reply_mb=1.5, deadline_s=12.0).settings()
    assert (settings.max_reply_mb, settings.deadline_s) == (1.5, 12.0)


@pytest.mark.parametrize("mode", ["huge", "declared-huge"])
def test_a_huge_reply_stops_at_the_byte_cap_within_a_memory_bound(mode, hostile):
    before = reset_peak_rss()  # else a suite that peaked higher earlier hides any growth here
    error, _ = _ask(hostile, mode, max_reply_mb=1.0, deadline_s=60.0)
    assert error is not None and error.kind == "too_large" and not error.retryable
    assert "cap of 1 MB" in str(error)
    # The stated bound: the process grew by far less than the 256 MB reply (it was never held whole).
    assert peak_rss_mb() - before < 64


@pytest.mark.parametrize("mode", ["drip", "hang"])
def test_a_dripping_or_hanging_endpoint_stops_at_the_deadline(mode, hostile):
    error, seconds = _ask(hostile, mode, max_reply_mb=1.0, deadline_s=1.5)
    assert error is not None and error.kind == "timeout" and "deadline of 1.5 s" in str(error)
    assert seconds < 30  # the read timeout (30 s) never fired: each byte restarted it


@pytest.mark.parametrize("mode, kind", [("garbage", "other"), ("5xx", "server_error"), ("echo", "auth")])
def test_garbage_5xx_and_a_key_echo_are_one_typed_error_without_the_key(mode, kind, hostile):
    error, _ = _ask(hostile, mode, max_reply_mb=1.0, deadline_s=10.0)
    assert error is not None and error.kind == kind
    assert KEY not in str(error) and "HOSTILE0123456789" not in str(error)
    assert "\n" not in str(error).strip() or len(str(error)) < 2000


def test_a_bound_cannot_be_switched_off_from_the_environment(monkeypatch):
    monkeypatch.setenv("TRAJSCOPE_LLM_MAX_REPLY_MB", "0")
    with pytest.raises(ValueError, match="positive finite number"):
        ModelConfig(name="m")
    monkeypatch.setenv("TRAJSCOPE_LLM_MAX_REPLY_MB", "2")
    monkeypatch.setenv("TRAJSCOPE_LLM_DEADLINE_S", "7")
    assert (ModelConfig(name="m").max_reply_mb, ModelConfig(name="m").deadline_s) == (2.0, 7.0)
