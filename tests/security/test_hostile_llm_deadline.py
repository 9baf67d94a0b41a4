"""The model client's deadline holds for the whole request, retries included, against loopback endpoints
that drip their headers, drip a body for ever or stream one without end; a connection reset is called a
connection error, never a timeout. Counted in requests the server saw, not in seconds."""
from __future__ import annotations

import asyncio
import socket
import struct
import threading
import time
from socketserver import BaseRequestHandler, ThreadingTCPServer

import pytest

from trajscope.engine.llm import ModelConfig, ModelError
from trajscope.engine.llm._client import ChatModel


def _read_request(sock: socket.socket) -> None:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                   if line.lower().startswith(b"content-length:")), 0)
    while len(body) < length:
        body += sock.recv(65536)


class _Endpoint(BaseRequestHandler):
    """Raw sockets, so a reply can stop anywhere: inside its headers, inside a chunked body, or with a reset."""

    def handle(self) -> None:
        server = self.server
        server.requests += 1  # type: ignore[attr-defined]
        sock = self.request
        try:
            _read_request(sock)
            mode = server.mode  # type: ignore[attr-defined]
            if mode == "drip-headers":  # a status line, then one header byte every 0.2 s for ever
                sock.sendall(b"HTTP/1.1 200 OK\r\nx-slow: ")
                while not server.stopping.wait(0.2):  # type: ignore[attr-defined]
                    sock.sendall(b"a")
            elif mode in ("drip-body", "endless-body"):  # chunked: slowly for ever, or fast for ever
                sock.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                             b"transfer-encoding: chunked\r\n\r\n")
                chunk = b" " if mode == "drip-body" else b" " * 65536
                while not server.stopping.is_set():  # type: ignore[attr-defined]
                    sock.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    if mode == "drip-body":
                        server.stopping.wait(0.2)  # type: ignore[attr-defined]
            elif mode == "reset":  # RST instead of a reply
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                sock.close()
        except OSError:
            pass


@pytest.fixture
def endpoint():
    server = ThreadingTCPServer(("127.0.0.1", 0), _Endpoint)
    server.daemon_threads = True
    server.mode, server.requests, server.stopping = "reset", 0, threading.Event()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.stopping.set()
    server.shutdown()
    server.server_close()


def _ask(server, mode: str, **config) -> ModelError:
    server.mode = mode
    cfg = ModelConfig(name="m", base_url=f"http://127.0.0.1:{server.server_address[1]}/v1", api_key="none",
                      timeout_s=5.0, max_retries=3, backoff_base_s=0.05, backoff_max_s=0.1, **config)

    async def go():
        async with ChatModel(cfg) as model:
            await model.complete([{"role": "user", "content": "hi"}])

    with pytest.raises(ModelError) as caught:
        asyncio.run(go())
    return caught.value


@pytest.mark.parametrize("mode", ["drip-headers", "drip-body"])
def test_a_dripping_endpoint_gets_one_attempt_within_the_deadline(mode, endpoint):
    # Each byte comes well inside the 5 s read timeout, so only the wall-clock deadline can stop it; and
    # it stops the request, not each of its 4 attempts in turn.
    error = _ask(endpoint, mode, deadline_s=1.5, max_reply_mb=1.0)
    assert error.kind == "timeout" and error.attempts == 1, error
    assert "deadline of 1.5 s (deadline_s)" in str(error) and "\n" not in str(error)
    time.sleep(0.3)  # let a retry, were there one, reach the server
    assert endpoint.requests == 1


def test_an_endless_body_stops_at_the_byte_cap(endpoint):
    error = _ask(endpoint, "endless-body", deadline_s=60.0, max_reply_mb=1.0)
    assert error.kind == "too_large" and "cap of 1 MB (max_reply_mb)" in str(error), error
    assert endpoint.requests == 1  # too large is never retried


def test_a_connection_reset_is_a_connection_error_not_a_timeout(endpoint):
    error = _ask(endpoint, "reset", deadline_s=60.0, max_reply_mb=1.0)
    assert error.kind == "connection" and "timeout" not in str(error).lower(), error
    assert error.attempts == 4 and endpoint.requests == 4  # retried, within the deadline
