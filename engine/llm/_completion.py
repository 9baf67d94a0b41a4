"""What one model call returned: text, tool calls, parsed JSON, tokens, latency and cost."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ToolCall:
    """A native tool call; `arguments_error` is set when the model's arguments were not a JSON object."""

    name: str
    arguments: dict[str, Any]
    call_id: str | None = None
    raw_arguments: str | None = None
    arguments_error: str | None = None


@dataclass(frozen=True)
class Completion:
    """One chat completion. `parse_error` names malformed output so a controller can record it."""

    text: str
    tool_calls: list[ToolCall] = field(default_factory=list)
    tokens_in: int | None = None
    tokens_out: int | None = None
    latency_ms: float | None = None
    # Price of generating this response; a cache hit reports the original figure with cached=True.
    cost_usd: float | None = None
    cached: bool = False
    raw: dict[str, Any] = field(default_factory=dict)
    parsed: dict[str, Any] | None = None
    parse_error: str | None = None
    finish_reason: str | None = None

    @property
    def malformed(self) -> bool:
        """True when requested structured output (JSON or tool arguments) could not be parsed."""
        return self.parse_error is not None or any(c.arguments_error for c in self.tool_calls)


def parse_json_object(text: str) -> tuple[dict[str, Any] | None, str | None]:
    """(object, None) for a JSON object, else (None, reason); tolerates a ```json fence."""
    body = text.strip()
    if body.startswith("```"):
        body = body.strip("`")
        body = body[4:] if body.lower().startswith("json") else body
    try:
        value = json.loads(body)
    except json.JSONDecodeError as exc:
        return None, f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
    if not isinstance(value, dict):
        return None, f"expected a JSON object, got {type(value).__name__}"
    return value, None


def parse_tool_call(name: str, raw_arguments: str | None, call_id: str | None = None) -> ToolCall:
    """A ToolCall from the wire form, keeping malformed arguments visible instead of raising."""
    if not raw_arguments:
        return ToolCall(name, {}, call_id, raw_arguments)
    arguments, error = parse_json_object(raw_arguments)
    return ToolCall(name, arguments or {}, call_id, raw_arguments, error)
