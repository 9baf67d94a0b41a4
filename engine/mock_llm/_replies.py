"""What the mock server answers to one request: a chat completion, an HTTP error, or a stall."""
from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

_ids = itertools.count(1)


@dataclass(frozen=True)
class MockReply:
    """One scripted answer: `body` is sent as JSON, else `raw_body` verbatim, else `chunks()` chunked (no
    Content-Length, generated as it is sent, so a test can serve a body far larger than its memory);
    after `delay_s` seconds."""

    status: int = 200
    body: dict[str, Any] | None = None
    raw_body: bytes | None = None
    delay_s: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    chunks: Callable[[], Iterator[bytes]] | None = None


def _completion_body(
    content: str | None, tool_calls: list[dict[str, Any]] | None, tokens_in: int, tokens_out: int | None
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    out = tokens_out if tokens_out is not None else max(1, len(content or "") // 4 + 4 * len(tool_calls or []))
    n = next(_ids)
    return {
        "id": f"chatcmpl-mock-{n}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": "mock",
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if tool_calls else "stop"}],
        "usage": {"prompt_tokens": tokens_in, "completion_tokens": out, "total_tokens": tokens_in + out},
    }


def reply_text(content: str, *, tokens_in: int = 100, tokens_out: int | None = None, delay_s: float = 0.0) -> MockReply:
    """An assistant message with plain text content."""
    return MockReply(body=_completion_body(content, None, tokens_in, tokens_out), delay_s=delay_s)


def reply_json(action: dict[str, Any], **kwargs: Any) -> MockReply:
    """A structured JSON action (the JSON protocol): the object serialised as the message content."""
    return reply_text(json.dumps(action), **kwargs)


def reply_tool_call(name: str, arguments: dict[str, Any] | str, *, content: str | None = None,
                    tokens_in: int = 100, tokens_out: int | None = None, delay_s: float = 0.0) -> MockReply:
    """A native tool call; pass `arguments` as a string to send malformed arguments verbatim."""
    args = arguments if isinstance(arguments, str) else json.dumps(arguments)
    call = {"id": f"call_{next(_ids)}", "type": "function", "function": {"name": name, "arguments": args}}
    return MockReply(body=_completion_body(content, [call], tokens_in, tokens_out), delay_s=delay_s)


def reply_tool_calls(calls: list[tuple[str, dict[str, Any]]], **kwargs: Any) -> MockReply:
    """Several native tool calls in one message."""
    first = reply_tool_call(*calls[0], **kwargs)
    assert first.body is not None
    message = first.body["choices"][0]["message"]
    for name, arguments in calls[1:]:
        message["tool_calls"].append(
            {
                "id": f"call_{next(_ids)}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
        )
    return first


def reply_malformed(text: str = '{"action": "search", "arguments": {"query": ') -> MockReply:
    """Content that is not a valid JSON action (a truncated object by default)."""
    return reply_text(text)


def reply_error(status: int, message: str = "scripted error", *, retry_after: float | None = None) -> MockReply:
    """An HTTP error in OpenAI's error shape (429 rate limit, 500 server error, ...)."""
    headers = {"retry-after": str(retry_after)} if retry_after is not None else {}
    body = {"error": {"message": message, "type": "mock_error", "code": status}}
    return MockReply(status=status, body=body, headers=headers)


def reply_invalid_body(raw: bytes = b"<html>bad gateway</html>", status: int = 200) -> MockReply:
    """A response body that is not JSON at all."""
    return MockReply(status=status, raw_body=raw)


def reply_stall(seconds: float, then: MockReply | None = None) -> MockReply:
    """Wait `seconds` before answering (longer than the client timeout makes a timeout)."""
    base = then or reply_text("late")
    return MockReply(status=base.status, body=base.body, raw_body=base.raw_body, delay_s=seconds, headers=base.headers)


def reply_huge(mb: int, *, char: bytes = b"a") -> MockReply:
    """One completion whose content is `mb` MB of one character, streamed chunk by chunk (never held whole)."""
    head = json.dumps({"id": f"chatcmpl-mock-{next(_ids)}", "object": "chat.completion", "created": 0,
                       "model": "mock", "choices": [{"index": 0, "finish_reason": "stop",
                                                     "message": {"role": "assistant", "content": ""}}]})
    prefix, suffix = head.split('"content": ""', 1)
    block = char * 65536

    def chunks() -> Iterator[bytes]:
        yield (prefix + '"content": "').encode()
        for _ in range(mb * 16):
            yield block
        yield ('"' + suffix).encode()

    return MockReply(chunks=chunks)
