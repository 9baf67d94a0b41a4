"""An OpenAI-compatible chat server over the ik_llama.cpp runtime (stdlib HTTP, loopback only).

It answers what trajscope's client sends an embedded model: /v1/models, and non-streaming
/v1/chat/completions with temperature, max_tokens, seed, stop and a JSON-schema response_format,
which it compiles into a grammar as llama-cpp-python's server does.
Run as `python -m trajscope.engine.llm._ik_server --model PATH --model_alias NAME --port N [...]`.
"""
from __future__ import annotations

import argparse
import json
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ._chat_prompt import ChatPrompter
from ._gbnf import schema_to_gbnf
from ._ik_runtime import IkRuntime, IkRuntimeError

MAX_BODY = 64 * 2**20


class BadRequest(ValueError):
    """The request cannot be answered as sent (HTTP 400)."""


def response_grammar(request: dict[str, Any]) -> str | None:
    """The grammar a request's response_format asks for, or None for free text."""
    fmt = request.get("response_format") or {}
    if not isinstance(fmt, dict) or fmt.get("type") in (None, "text"):
        return None
    if fmt["type"] == "json_object":
        return schema_to_gbnf(fmt.get("schema"))
    if fmt["type"] == "json_schema":
        return schema_to_gbnf((fmt.get("json_schema") or {}).get("schema"))
    raise BadRequest(f"unsupported response_format type {fmt['type']!r}")


class ChatService:
    """The model, its prompt renderer and the lock that keeps calls serial."""

    def __init__(self, runtime: IkRuntime, prompter: ChatPrompter, alias: str):
        self.runtime, self.prompter, self.alias = runtime, prompter, alias
        self.lock = threading.Lock()

    def models(self) -> dict[str, Any]:
        return {"object": "list", "data": [{"id": self.alias, "object": "model", "owned_by": "trajscope"}]}

    def chat(self, request: dict[str, Any]) -> dict[str, Any]:
        messages = request.get("messages")
        if not isinstance(messages, list) or not messages:
            raise BadRequest("messages must be a non-empty list")
        stop = request.get("stop") or []
        stop = [stop] if isinstance(stop, str) else list(stop)
        rendered = self.prompter.render(messages)
        grammar = response_grammar(request)
        with self.lock:
            try:
                result = self.runtime.generate(
                    rendered.prompt, max_tokens=int(request.get("max_tokens") or 256), grammar=grammar,
                    temperature=float(request.get("temperature") or 0.0), seed=request.get("seed"),
                    stop=stop + rendered.stop, add_bos=rendered.add_bos)
            except IkRuntimeError as exc:
                raise BadRequest(str(exc)) from None
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex[:24]}", "object": "chat.completion", "created": int(time.time()),
            "model": self.alias,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": result.text},
                         "finish_reason": result.finish_reason}],
            "usage": {"prompt_tokens": result.prompt_tokens, "completion_tokens": result.completion_tokens,
                      "total_tokens": result.prompt_tokens + result.completion_tokens},
        }


def _handler(service: ChatService) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _send(self, status: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _error(self, status: int, message: str) -> None:
            self._send(status, {"error": {"message": message, "type": "invalid_request_error"}})

        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            if self.path.rstrip("/") in ("/v1/models", "/models"):
                self._send(200, service.models())
            else:
                self._error(404, f"no route {self.path}")

        def do_POST(self) -> None:  # noqa: N802
            if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
                self._error(404, f"no route {self.path}")
                return
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAX_BODY:
                self._error(413, f"request body of {length} bytes is over {MAX_BODY}")
                return
            try:
                request = json.loads(self.rfile.read(length) or b"{}")
                if not isinstance(request, dict):
                    raise BadRequest("the body must be a JSON object")
                self._send(200, service.chat(request))
            except (BadRequest, json.JSONDecodeError, TypeError, ValueError) as exc:
                self._error(400, str(exc))

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass  # one line per request would drown the model's own log

    return Handler


def main(argv: list[str] | None = None) -> None:
    """Load the model, then serve until terminated."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--model_alias", required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--n_ctx", type=int, default=4096)
    parser.add_argument("--n_threads", type=int, default=1)
    parser.add_argument("--chat_format", default=None, help="a named format instead of the GGUF's template")
    args = parser.parse_args(argv)
    runtime = IkRuntime(args.model, n_ctx=args.n_ctx, n_threads=args.n_threads)
    service = ChatService(runtime, ChatPrompter.for_runtime(runtime, args.chat_format), args.model_alias)
    server = ThreadingHTTPServer((args.host, args.port), _handler(service))
    print(f"serving {args.model_alias} on http://{args.host}:{args.port}/v1", flush=True)
    try:
        server.serve_forever()
    finally:
        server.server_close()
        runtime.close()


if __name__ == "__main__":
    main()
