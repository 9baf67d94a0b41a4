"""The two action protocols: native tool calls ("tools") and JSON structured actions ("json")."""
from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from trajscope.engine.prompts import load_prompt

ANSWER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"answer": {"type": "string"}},
    "required": ["answer"],
}
FINAL_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "final",
        "description": "Submit the final answer and stop.",
        "parameters": {
            "type": "object",
            "properties": {"answer": {"type": "string", "description": "a short answer phrase"}},
            "required": ["answer"],
        },
    },
}
# The problem of a structured reply cut at max_tokens: asking again would be cut again, so it is not retried.
TRUNCATED = "truncated"
_FENCE_RE = re.compile(r"^\s*```(?:json)?\s*|\s*```\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class Action:
    """One action the model asked for; `problem` is set when it is not a valid action."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    call_id: str | None = None
    problem: str | None = None


@dataclass(frozen=True)
class ParsedTurn:
    """What one model reply asked for, in order."""

    actions: list[Action]
    text: str
    # The model's reasoning, when the protocol has a place for it: the text beside native tool
    # calls, or a "thought" field of a JSON action (not the JSON itself, which the step keeps as raw).
    thought: str | None = None


def _function_of(tool: dict[str, Any]) -> dict[str, Any]:
    return tool.get("function", tool)


def _with_chunk_enum(params: dict[str, Any], ids: Sequence[str]) -> dict[str, Any]:
    props = dict(params.get("properties", {}))
    for name in ("chunk_id", "chunk_ids"):
        if name in props:
            props[name] = {"type": "string", "enum": list(ids)}
    return {**params, "properties": props}


class ActionSpace:
    """The actions a controller offers, built from OpenAI-style tool definitions."""

    def __init__(self, tool_defs: list[dict[str, Any]], *, ensure_final: bool = True):
        defs = [t for t in tool_defs if _function_of(t).get("name")]
        if ensure_final and not any(_function_of(t)["name"] == "final" for t in defs):
            defs.append(FINAL_TOOL)
        self._defs = defs
        self.names: tuple[str, ...] = tuple(_function_of(t)["name"] for t in defs)

    def tools(self) -> list[dict[str, Any]]:
        """Definitions in the OpenAI `tools` request format."""
        return [t if "function" in t else {"type": "function", "function": t} for t in self._defs]

    def json_schema(self, known_chunk_ids: Sequence[str] = ()) -> dict[str, Any]:
        """JSON Schema of a structured action: one branch per action, arguments typed.

        With known_chunk_ids a read may only name those, so a grammar-constrained reply cannot invent one.
        """
        branches = []
        for tool in self._defs:
            fn = _function_of(tool)
            params = fn.get("parameters") or {"type": "object"}
            if known_chunk_ids and fn["name"] in ("read", "read_chunk"):
                params = _with_chunk_enum(params, known_chunk_ids)
            branches.append({
                "type": "object",
                "properties": {"action": {"const": fn["name"]}, "arguments": params},
                "required": ["action", "arguments"],
            })
        return {"anyOf": branches} if len(branches) > 1 else branches[0]

    def describe(self) -> str:
        """One line per action, `name(arg, ...): description`, for a system prompt."""
        lines = []
        for tool in self._defs:
            fn = _function_of(tool)
            args = ", ".join((fn.get("parameters") or {}).get("properties", {}))
            desc = fn.get("description", "").strip()
            lines.append(f"- {fn['name']}({args})" + (f": {desc}" if desc else ""))
        return "\n".join(lines)


def parse_json_object(text: str) -> tuple[dict[str, Any] | None, str | None]:
    """Parse a JSON object out of a model reply (tolerating code fences); (value, problem)."""
    body = _FENCE_RE.sub("", text or "").strip()
    if not body:
        return None, "empty reply"
    try:
        value = json.loads(body)
    except json.JSONDecodeError:
        start, end = body.find("{"), body.rfind("}")
        try:
            value = json.loads(body[start:end + 1]) if 0 <= start < end else None
        except json.JSONDecodeError:
            value = None
        if value is None:
            return None, "reply is not valid JSON"
    if not isinstance(value, dict):
        return None, "reply is not a JSON object"
    return value, None


def _coerce_arguments(arguments: Any) -> tuple[dict[str, Any] | None, str | None]:
    if isinstance(arguments, dict):
        return arguments, None
    if arguments is None or arguments == "":
        return {}, None
    if isinstance(arguments, str):
        value, problem = parse_json_object(arguments)
        return value, (f"arguments: {problem}" if problem else None)
    return None, "arguments must be a JSON object"


class ToolCallProtocol:
    """Native tool calls; replies to each call with a `tool` message."""

    name = "tools"

    def __init__(self, *, text_is_final: bool = False):
        self.text_is_final = text_is_final

    def request(self, space: ActionSpace, known_chunk_ids: Sequence[str] = ()) -> dict[str, Any]:
        return {"tools": space.tools()}

    def system_suffix(self) -> str:
        return ""

    def parse(self, completion: Any, space: ActionSpace, turn: int) -> ParsedTurn:
        text = getattr(completion, "text", None) or ""
        calls = list(getattr(completion, "tool_calls", None) or [])
        if not calls:
            if self.text_is_final and text.strip():
                return ParsedTurn([Action("final", {"answer": text.strip()})], text)
            return ParsedTurn([Action("", problem="the reply called no tool")], text, text.strip() or None)
        actions = []
        for i, call in enumerate(calls):
            call_id = f"call_{turn}_{i}"
            name = str(getattr(call, "name", "") or "")
            args, problem = _coerce_arguments(getattr(call, "arguments", None))
            if getattr(call, "arguments_error", None):
                problem = f"arguments are not a JSON object ({call.arguments_error})"
            if name not in space.names:
                problem = f"unknown action {name!r}"
            actions.append(Action(name, args or {}, call_id, problem))
        return ParsedTurn(actions, text, text.strip() or None)

    def messages(self, parsed: ParsedTurn, observations: list[str]) -> list[dict[str, Any]]:
        """The assistant turn and the replies to it, in chat-completions form."""
        with_ids = [a for a in parsed.actions if a.call_id]
        if not with_ids:
            return [{"role": "assistant", "content": parsed.text},
                    {"role": "user", "content": "\n\n".join(observations)}]
        assistant = {
            "role": "assistant",
            "content": parsed.text or None,
            "tool_calls": [
                {"id": a.call_id, "type": "function",
                 "function": {"name": a.name, "arguments": json.dumps(a.arguments, ensure_ascii=False)}}
                for a in with_ids
            ],
        }
        replies = [{"role": "tool", "tool_call_id": a.call_id, "content": obs}
                   for a, obs in zip(with_ids, observations, strict=False)]
        return [assistant, *replies]

    def answer_request(self, space: ActionSpace | None = None) -> tuple[str, dict[str, Any]]:
        """(prompt suffix, request kwargs) for a plain answer; after tool use, tools are kept but disabled."""
        if space is None:
            return "", {}
        return "", {"tools": space.tools(), "tool_choice": "none"}

    def parse_answer(self, completion: Any) -> tuple[str | None, str | None]:
        text = (getattr(completion, "text", None) or "").strip()
        return (text or None), (None if text else "empty answer")


class JsonActionProtocol:
    """Structured actions `{"action": ..., "arguments": {...}}` constrained by a JSON Schema."""

    name = "json"

    def request(self, space: ActionSpace, known_chunk_ids: Sequence[str] = ()) -> dict[str, Any]:
        return {"response_schema": space.json_schema(known_chunk_ids)}

    def system_suffix(self) -> str:
        return load_prompt("json_protocol")

    def parse(self, completion: Any, space: ActionSpace, turn: int) -> ParsedTurn:
        text = getattr(completion, "text", None) or ""
        value, problem = parse_json_object(text)
        if problem and getattr(completion, "finish_reason", None) == "length":
            return ParsedTurn([Action("", problem=f"{TRUNCATED}: the reply reached max_tokens inside its JSON "
                                                  f"({problem})")], text)
        if problem:
            return ParsedTurn([Action("", problem=problem)], text)
        assert value is not None
        name = value.get("action")
        if not isinstance(name, str) or not name:
            return ParsedTurn([Action("", problem="missing \"action\"")], text)
        args, problem = _coerce_arguments(value.get("arguments", {}))
        if name not in space.names:
            problem = f"unknown action {name!r}"
        thought = value.get("thought")
        return ParsedTurn([Action(name, args or {}, None, problem)], text,
                          thought.strip() or None if isinstance(thought, str) else None)

    def messages(self, parsed: ParsedTurn, observations: list[str]) -> list[dict[str, Any]]:
        return [{"role": "assistant", "content": parsed.text},
                {"role": "user", "content": "\n\n".join(observations)}]

    def answer_request(self, space: ActionSpace | None = None) -> tuple[str, dict[str, Any]]:
        return load_prompt("answer_json"), {"response_schema": ANSWER_SCHEMA}

    def parse_answer(self, completion: Any) -> tuple[str | None, str | None]:
        text = getattr(completion, "text", None) or ""
        value, problem = parse_json_object(text)
        if value is not None and isinstance(value.get("answer"), (str, int, float)):
            answer = str(value["answer"]).strip()
            return (answer or None), (None if answer else "empty answer")
        # Salvage the raw text so a forced answer is never silently lost.
        salvaged = text.strip() or None
        return salvaged, problem or "missing \"answer\""


ActionProtocol = ToolCallProtocol | JsonActionProtocol


def make_protocol(name: str, *, text_is_final: bool = False) -> ActionProtocol:
    """The protocol called `name` ("tools" or "json")."""
    if name == "tools":
        return ToolCallProtocol(text_is_final=text_is_final)
    if name == "json":
        return JsonActionProtocol()
    raise ValueError(f"unknown action protocol {name!r}; expected 'tools' or 'json'")
