"""Tool calls written in the text of a turn, as models trained without a tools API write them.

Search-R1: `<search> query </search>` in the assistant's text, the results in the next user turn's
`<information>...</information>`. Hermes / Qwen: `<tool_call>{"name": ..., "arguments": {...}}</tool_call>`,
the results in `<tool_response>...</tool_response>`. A `<tool_call>` whose body is not such JSON is no call
(the environment could not run it either). Scans use `str.find`: linear in the text.
"""
from __future__ import annotations

import json
from typing import Any

from ._chat_messages import ChatMessage, ToolCall, ToolResult
from ._fields import Where

_SEARCH = ("<search>", "</search>")
_TOOL_CALL = ("<tool_call>", "</tool_call>")
_RESULT_TAGS = (("<information>", "</information>"), ("<tool_response>", "</tool_response>"))
_SEARCH_TOOL = "search"


def _blocks(text: str, tags: tuple[str, str]) -> list[str]:
    """The bodies of every closed `<tag>...</tag>` in order."""
    open_tag, close_tag = tags
    out, at = [], 0
    while (start := text.find(open_tag, at)) >= 0:
        end = text.find(close_tag, start + len(open_tag))
        if end < 0:
            break
        out.append(text[start + len(open_tag):end])
        at = end + len(close_tag)
    return out


def _json_call(body: str) -> dict[str, Any] | None:
    try:
        value = json.loads(body.strip())
    except ValueError:
        return None
    if isinstance(value, dict) and isinstance(value.get("name"), str):
        return value
    return None


def text_calls(message: ChatMessage, where: Where) -> list[ToolCall]:
    """The calls an assistant turn wrote in its text (none when it has API tool calls)."""
    if message.calls or not message.text:
        return []
    at = where.at("content")
    calls = [ToolCall(None, call["name"], call.get("arguments", call.get("parameters")), at)
             for body in _blocks(message.text, _TOOL_CALL) if (call := _json_call(body)) is not None]
    calls += [ToolCall(None, _SEARCH_TOOL, {"query": body.strip()}, at) for body in _blocks(message.text, _SEARCH)]
    return calls


def text_results(message: ChatMessage, where: Where) -> list[ToolResult]:
    """The results a user turn carries in result tags, in order."""
    if not message.text:
        return []
    bodies = [b for tags in _RESULT_TAGS for b in _blocks(message.text, tags)]
    return [ToolResult(None, None, body.strip(), body.strip(), where.at("content")) for body in bodies]
