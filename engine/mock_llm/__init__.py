"""A scripted loopback OpenAI-compatible server for tests and benchmarks (never a shipped default)."""
from ._replies import (
    MockReply,
    reply_error,
    reply_huge,
    reply_invalid_body,
    reply_json,
    reply_malformed,
    reply_stall,
    reply_text,
    reply_tool_call,
    reply_tool_calls,
)
from ._server import MockLLMServer, RecordedRequest, Responder

__all__ = [
    "MockLLMServer", "MockReply", "RecordedRequest", "Responder", "reply_error", "reply_huge", "reply_invalid_body",
    "reply_json", "reply_malformed", "reply_stall", "reply_text", "reply_tool_call", "reply_tool_calls",
]
