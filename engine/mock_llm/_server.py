"""A loopback OpenAI-compatible chat server that answers from a script and records every request."""
from __future__ import annotations

import collections
import io
import json
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ._replies import MockReply, reply_error, reply_text

Responder = Callable[["RecordedRequest"], "MockReply | str"]


@dataclass(frozen=True)
class RecordedRequest:
    """A request as the server received it."""

    method: str
    path: str
    headers: dict[str, str]  # names lower-cased
    body: dict[str, Any] = field(default_factory=dict)
    index: int = 0

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The chat messages of the request."""
        return self.body.get("messages", [])

    def text(self) -> str:
        """All message contents joined, for matching a request to a script entry."""
        return "\n".join(str(m.get("content") or "") for m in self.messages)


class MockLLMServer:
    """Scripted OpenAI-compatible server on 127.0.0.1:<free port>; a test double, never a default model.

    The script is a callable (request -> MockReply or text) or a queue of replies (`enqueue`);
    the queue is used first. `latency_s` adds a fixed delay to every answer.
    """

    def __init__(self, responder: Responder | None = None, *, latency_s: float = 0.0):
        self.responder = responder
        self.latency_s = latency_s
        self.requests: list[RecordedRequest] = []
        self._queue: collections.deque[MockReply | str] = collections.deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- script ------------------------------------------------------------------------------------
    def enqueue(self, *replies: MockReply | str) -> MockLLMServer:
        """Answer the next requests with these replies, in order."""
        with self._lock:
            self._queue.extend(replies)
        return self

    def extend(self, replies: Iterable[MockReply | str]) -> MockLLMServer:
        """Enqueue many replies."""
        return self.enqueue(*replies)

    @property
    def pending(self) -> int:
        """Replies still queued."""
        with self._lock:
            return len(self._queue)

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        """The recorded chat-completion requests only."""
        with self._lock:
            return [r for r in self.requests if r.path.endswith("/chat/completions")]

    def _next_reply(self, request: RecordedRequest) -> MockReply:
        with self._lock:
            queued = self._queue.popleft() if self._queue else None
        reply: MockReply | str | None = queued
        if reply is None and self.responder is not None:
            reply = self.responder(request)
        if reply is None:
            reply = reply_error(500, "mock script exhausted: no reply queued and no responder")
        return reply_text(reply) if isinstance(reply, str) else reply

    def _record(self, method: str, path: str, headers: dict[str, str], body: dict[str, Any]) -> RecordedRequest:
        with self._lock:
            request = RecordedRequest(method, path, headers, body, len(self.requests))
            self.requests.append(request)
        return request

    # -- lifecycle ---------------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        """http://127.0.0.1:PORT/v1"""
        if self._httpd is None:
            raise RuntimeError("mock server not started")
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    @property
    def model_spec(self) -> str:
        """The `--model` spec that points the engine here."""
        return f"mock:{self.base_url}"

    def start(self) -> MockLLMServer:
        """Serve on a background thread."""
        self._httpd = _Server(("127.0.0.1", 0), _make_handler(self))
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="mock-llm", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; stalled replies are abandoned."""
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> MockLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class _Server(ThreadingHTTPServer):
    # listen() backlog is read in the constructor: with the default 5, a burst of 64 connects drops SYNs
    # and each dropped one waits a 1 s retransmit.
    request_queue_size = 512
    daemon_threads = True


def _make_handler(server: MockLLMServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as the openai SDK's pool expects
        # Headers and body in one segment, sent at once: otherwise Nagle + delayed ACK add ~40 ms.
        disable_nagle_algorithm = True
        wbufsize = 1 << 16

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - silence access logs
            return

        def _send(self, reply: MockReply) -> None:
            if reply.chunks is not None and reply.raw_body is None and reply.body is None:
                self._send_chunked(reply)
                return
            payload = reply.raw_body if reply.raw_body is not None else json.dumps(reply.body or {}).encode()
            try:
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload)
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True  # the client gave up (a timeout test)

        def _send_chunked(self, reply: MockReply) -> None:
            assert reply.chunks is not None
            try:
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Transfer-Encoding", "chunked")
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                for chunk in reply.chunks():
                    if server._stopping.is_set():
                        break
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                # The client stopped reading (its byte cap): drop what is buffered for it, so the server's
                # own last flush does not fail on the closed socket.
                self.close_connection = True
                self.wfile = io.BytesIO()

        def do_GET(self) -> None:  # noqa: N802
            server._record("GET", self.path, _lower(self.headers), {})
            if self.path.rstrip("/").endswith("/models"):
                self._send(MockReply(body={"object": "list", "data": [{"id": "mock", "object": "model"}]}))
            else:
                self._send(reply_error(404, f"no route {self.path}"))

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length") or 0)
            data = self.rfile.read(length) if length else b""
            try:
                body = json.loads(data) if data else {}
            except json.JSONDecodeError:
                body = {"_unparsed": data.decode(errors="replace")}
            request = server._record("POST", self.path, _lower(self.headers), body)
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._send(reply_error(404, f"no route {self.path}"))
                return
            try:
                reply = server._next_reply(request)
            except Exception as exc:  # noqa: BLE001 - a broken responder is a 500, not a dead server
                reply = reply_error(500, f"mock responder raised {type(exc).__name__}: {exc}")
            delay = server.latency_s + reply.delay_s
            if delay > 0 and server._stopping.wait(delay):
                return
            self._send(reply)

    return Handler


def _lower(headers: Any) -> dict[str, str]:
    # Header names are case-insensitive; httpx sends them lower-case.
    return {k.lower(): v for k, v in headers.items()}
