"""What tracing products store as an LLM call's or tool's input and output: values that are often JSON text
(sometimes encoded twice, sometimes a Python repr), chat messages, tool-call requests and answer text."""
from __future__ import annotations

import ast
import json
import re
from typing import Any

from trajscope.format import loads_bounded

from ._fields import Where

_NULLS = frozenset({"None", "null", "undefined"})
_MAX_DECODES = 5
_MAX_REPR_CHARS = 1 << 20  # a Python repr longer than this stays text (literal_eval cost)
# Agno / pydantic reprs of a message: "role='user' content='What is ...' name=None ..."
_REPR_USER = re.compile(r"""^role=['"]user['"] content=(['"])(.*?)\1 \w+=""", re.S)
# A transcript rendered as text: "user: What is ..." on its own line
_TEXT_USER = re.compile(r"^(?:user|human): (.+)$", re.M)
_USER_ROLES = frozenset({"user", "human"})


def deep_decode(value: Any, where: Where) -> Any:
    """The value with JSON text decoded repeatedly (double-encoded JSON, a Python repr of a dict or list,
    and the text `None` / `null` as null); text that is neither stays text."""
    for _ in range(_MAX_DECODES):
        if not isinstance(value, str):
            return value
        text = value.strip()
        if text in _NULLS:
            return None
        if not text or text[0] not in '{["':
            return value
        try:
            value = loads_bounded(text, path=where.path, line=where.line, field=where.prefix or None)
            continue
        except json.JSONDecodeError:
            pass
        if text[0] in "{[" and len(text) <= _MAX_REPR_CHARS:
            try:
                return ast.literal_eval(text)
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                pass
        return value
    return value


def tool_requests(value: Any) -> list[tuple[str | None, str, Any]]:
    """(call id, tool name, arguments) of every tool call an LLM output requests, once per call id
    (OpenAI chat / Responses, LangChain messages, Anthropic `tool_use` blocks)."""
    found: dict[str, tuple[str | None, str, Any]] = {}

    def walk(obj: Any) -> None:
        if isinstance(obj, dict):
            function = obj.get("function")
            call_id = obj.get("call_id") or obj.get("id")
            call_id = call_id if isinstance(call_id, str) else None
            if isinstance(function, dict) and isinstance(function.get("name"), str) and call_id:
                found.setdefault(call_id, (call_id, function["name"], function.get("arguments")))
            elif obj.get("type") in ("function_call", "tool_call", "tool_use") and isinstance(obj.get("name"), str):
                key = call_id or f"{obj['name']}#{len(found)}"
                found.setdefault(key, (call_id, obj["name"], obj.get("arguments", obj.get("args", obj.get("input")))))
            for item in obj.values():
                walk(item)
        elif isinstance(obj, list):
            for item in obj:
                walk(item)

    walk(value)
    return list(found.values())


def _parts_text(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [p.get("text") for p in content if isinstance(p, dict) and p.get("type") in ("text", "output_text")]
        return "\n".join(t for t in texts if isinstance(t, str)) or None
    return None


def output_text(value: Any) -> str | None:
    """The answer text of an LLM output (chat completion, Responses output, a message, or plain text)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):  # a list of messages: the last one's text
        return output_text(value[-1]) if value else None
    if not isinstance(value, dict):
        return None
    choices = value.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        return _parts_text((choices[0].get("message") or {}).get("content"))
    if "content" in value:
        return _parts_text(value["content"])
    if isinstance(value.get("message"), dict):  # one choice (`{"index": 0, "message": {...}}`, OTel gen_ai.choice)
        return output_text(value["message"])
    if isinstance(value.get("output"), list):  # OpenAI Responses
        texts = [c.get("text", "") for item in value["output"] if isinstance(item, dict)
                 for c in item.get("content") or [] if isinstance(c, dict) and c.get("type") == "output_text"]
        return "\n".join(texts) if texts else None
    if isinstance(value.get("messages"), list):
        return output_text(value["messages"])
    return None


def user_text(value: Any) -> str | None:
    """The first user (human) message in an input: chat messages, LangChain messages, message reprs,
    a `user: ...` transcript, or a dict with a `question` / `query` / `input` string."""
    if isinstance(value, str):
        if match := _REPR_USER.match(value):
            return match.group(2)
        if match := _TEXT_USER.search(value):
            return match.group(1)
        return None
    if isinstance(value, list):
        return next((t for item in value if (t := user_text(item))), None)
    if not isinstance(value, dict):
        return None
    if value.get("role") in _USER_ROLES or value.get("type") in _USER_ROLES:
        return _parts_text(value.get("content"))
    for key in ("messages", "input", "inputs"):
        if isinstance(value.get(key), (list, dict)) and (found := user_text(value[key])):
            return found
    for key in ("question", "query", "input", "prompt"):
        if isinstance(value.get(key), str) and value[key].strip():
            return value[key]
    return None
