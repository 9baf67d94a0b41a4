"""One chat message in the shapes agent frameworks write it, read as OpenAI's: role, text, tool calls, results.

OpenAI chat-completions (`role`, `tool_calls: [{id, function: {name, arguments}}]`, `tool` turns with
`tool_call_id`, the legacy `function_call`); LangChain / LangGraph dumps (`type` human / ai / tool,
`tool_calls: [{name, args, id}]`, and `dumpd` / `messages_to_dict` objects with the fields in `kwargs` / `data`);
Anthropic content blocks (`tool_use` in an assistant turn, `tool_result` in a user turn); smolagents memory
(`tool-call` turns whose text is `Calling tools:` and the calls as a Python literal, `tool-response` turns
`Call id: <id>` then the observation).
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any

from ._fields import Where, as_text, need_list

# Role names frameworks use -> the chat-completions role.
_ROLES = {"system": "system", "developer": "system", "user": "user", "human": "user", "assistant": "assistant",
          "ai": "assistant", "model": "assistant", "tool": "tool", "function": "tool"}
# smolagents' own roles: its calls and their results written as text.
_SMOL_CALL, _SMOL_RESPONSE = "tool-call", "tool-response"
_CALLING = "Calling tools:"
_CALL_ID = re.compile(r"\ACall id:[ \t]*(?P<id>[^\s]+)[ \t]*\n(?:(?:Observation|Output):[ \t]*\n)?")
_MAX_LITERAL = 1_000_000
# LangChain `dumpd` class names (the last part of `id`) -> role.
_LC_CLASSES = {"SystemMessage": "system", "HumanMessage": "user", "AIMessage": "assistant",
               "AIMessageChunk": "assistant", "ToolMessage": "tool", "FunctionMessage": "tool"}


@dataclass(frozen=True)
class ToolCall:
    """One call an assistant turn made: its id, the function name and the arguments as written."""

    call_id: Any
    name: Any
    arguments: Any
    where: Where


@dataclass(frozen=True)
class ToolResult:
    """One tool result: the call id it answers (None: by position), the tool name, its content and text."""

    call_id: str | None
    name: str | None
    content: Any
    text: str | None
    where: Where


@dataclass(frozen=True)
class ChatMessage:
    """A message as chat-completions sees it; `role` None when the source names none."""

    role: str | None
    text: str | None
    calls: list[ToolCall] = field(default_factory=list)
    results: list[ToolResult] = field(default_factory=list)
    continues: bool = False  # a smolagents `tool-call` turn: the calls of the assistant turn before it


def content_text(content: Any) -> str | None:
    """The text of a message's content: a string, or the text parts of a list (tool blocks left out)."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") if isinstance(p, dict) else p for p in content]
        return "\n".join(p for p in parts if isinstance(p, str))
    return as_text(content)


def _fields(raw: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    """The message's own fields and its role, unwrapping LangChain's serialised forms."""
    if isinstance(raw.get("kwargs"), dict) and raw.get("lc") is not None:  # dumpd
        ident = raw.get("id")
        cls = ident[-1] if isinstance(ident, list) and ident and isinstance(ident[-1], str) else None
        fields = raw["kwargs"]
        return fields, _LC_CLASSES.get(cls or "") or _ROLES.get(str(fields.get("type", "")).lower())
    if isinstance(raw.get("data"), dict) and isinstance(raw.get("type"), str) and "role" not in raw:
        fields = raw["data"]  # messages_to_dict: {"type": "ai", "data": {...}}
        return fields, _ROLES.get(raw["type"].lower())
    role = raw.get("role") if isinstance(raw.get("role"), str) else raw.get("type")
    return raw, _ROLES.get(role.lower(), role.lower()) if isinstance(role, str) else None


def _calls(fields: dict[str, Any], where: Where) -> list[ToolCall]:
    out: list[ToolCall] = []
    listed = fields.get("tool_calls")
    if not listed and isinstance(fields.get("additional_kwargs"), dict):
        listed = fields["additional_kwargs"].get("tool_calls")
    if listed:
        at = where.at("tool_calls")
        for k, call in enumerate(need_list(listed, at)):
            if not isinstance(call, dict):
                raise at.at(k).error("expected an object")
            function: dict[str, Any] = call["function"] if isinstance(call.get("function"), dict) else call
            arguments = next((function[key] for key in ("arguments", "args", "input") if key in function), None)
            out.append(ToolCall(call.get("id"), function.get("name"), arguments, at.at(k)))
    elif isinstance(fields.get("function_call"), dict):
        call = fields["function_call"]
        out.append(ToolCall(None, call.get("name"), call.get("arguments"), where.at("function_call")))
    content = fields.get("content")
    if isinstance(content, list):  # Anthropic blocks
        for k, block in enumerate(content):
            if isinstance(block, dict) and block.get("type") == "tool_use":
                out.append(ToolCall(block.get("id"), block.get("name"), block.get("input"), where.at("content").at(k)))
    return out


def _results(fields: dict[str, Any], role: str | None, where: Where) -> list[ToolResult]:
    content = fields.get("content")
    if role == "tool":
        call_id = fields.get("tool_call_id") or fields.get("tool_use_id")
        name = fields.get("name")
        return [ToolResult(call_id if isinstance(call_id, str) and call_id else None,
                           name if isinstance(name, str) else None, content, content_text(content),
                           where.at("content"))]
    out = []
    if isinstance(content, list):
        for k, block in enumerate(content):
            if isinstance(block, dict) and block.get("type") == "tool_result":
                inner = block.get("content")
                call_id = block.get("tool_use_id")
                out.append(ToolResult(call_id if isinstance(call_id, str) else None, None, inner,
                                      content_text(inner), where.at("content").at(k)))
    return out


def _smolagents_calls(text: str, where: Where) -> list[ToolCall]:
    listed = text.strip()[len(_CALLING):].strip()
    if len(listed) > _MAX_LITERAL:
        return []
    try:
        calls = ast.literal_eval(listed)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        raise where.error("expected the tool calls as a list after 'Calling tools:'", "content") from None
    fields = {"tool_calls": calls if isinstance(calls, list) else [calls]}
    return _calls(fields, where.at("content"))


def _smolagents_message(role: str, text: str | None, where: Where) -> ChatMessage | None:
    if role == _SMOL_CALL and text and text.strip().startswith(_CALLING):
        return ChatMessage(role="assistant", text=None, calls=_smolagents_calls(text, where), continues=True)
    if role == _SMOL_RESPONSE and text is not None:
        match = _CALL_ID.match(text)
        body = text[match.end():] if match else text
        result = ToolResult(match.group("id") if match else None, None, body, body, where.at("content"))
        return ChatMessage(role="tool", text=text, results=[result])
    return None


def chat_message(raw: dict[str, Any], where: Where) -> ChatMessage:
    """The message read as chat-completions: role, text, calls (assistant) and tool results."""
    fields, role = _fields(raw)
    if role in (_SMOL_CALL, _SMOL_RESPONSE):
        smol = _smolagents_message(role, content_text(fields.get("content")), where)
        if smol is not None:
            return smol
    calls = _calls(fields, where) if role == "assistant" else []
    results = _results(fields, role, where)
    if results and role == "user":
        role = "tool"  # a user turn that only carries tool results is the tools' turn
    return ChatMessage(role=role, text=content_text(fields.get("content")), calls=calls, results=results)
