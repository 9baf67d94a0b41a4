"""The two tool sets and the argument schema of every tool (shared by validation and tool_schemas)."""
from __future__ import annotations

from typing import Any, Literal

Toolset = Literal["read_gate", "arag"]

_STRING = {"type": "string"}
_CHUNK_IDS = {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}, "minItems": 1}]}

# name -> (description, JSON Schema of its arguments)
TOOL_SPECS: dict[str, tuple[str, dict[str, Any]]] = {
    "search": (
        "Search the corpus (BM25 + dense retrieval fused by RRF). Returns the top chunk ids with short "
        "snippets; snippets are not evidence, read a chunk to see the full passage.",
        {"type": "object", "properties": {"query": {**_STRING, "description": "search query"}},
         "required": ["query"], "additionalProperties": False},
    ),
    "keyword_search": (
        "Lexical (BM25) search for passages containing the given keywords. Returns the top chunk ids "
        "with short snippets.",
        {"type": "object",
         "properties": {"keywords": {"anyOf": [{"type": "string"},
                                               {"type": "array", "items": {"type": "string"}, "minItems": 1}],
                                     "description": "keywords, as a list or a space-separated string"}},
         "required": ["keywords"], "additionalProperties": False},
    ),
    "semantic_search": (
        "Semantic (dense embedding) search by meaning. Returns the top chunk ids with short snippets.",
        {"type": "object", "properties": {"query": {**_STRING, "description": "natural-language query"}},
         "required": ["query"], "additionalProperties": False},
    ),
    "read": (
        "Read the full passage of one or more chunk ids taken from search results.",
        {"type": "object", "properties": {"chunk_id": {**_CHUNK_IDS, "description": "chunk id(s) to read"}},
         "required": ["chunk_id"], "additionalProperties": False},
    ),
    "read_chunk": (
        "Read the full passage of one or more chunk ids taken from search results.",
        {"type": "object", "properties": {"chunk_id": {**_CHUNK_IDS, "description": "chunk id(s) to read"}},
         "required": ["chunk_id"], "additionalProperties": False},
    ),
    "final": (
        "Give the final answer and stop. Answer with a short phrase (an entity, date or number).",
        {"type": "object", "properties": {"answer": {**_STRING, "description": "the final answer"}},
         "required": ["answer"], "additionalProperties": False},
    ),
}

TOOLSETS: dict[str, tuple[str, ...]] = {
    "read_gate": ("search", "read", "final"),
    "arag": ("keyword_search", "semantic_search", "read_chunk", "final"),
}


def tool_schemas(toolset: Toolset, protocol: Literal["tools", "json"] = "tools") -> list[dict[str, Any]]:
    """OpenAI tool definitions (protocol "tools"), or one JSON Schema for an action object (protocol "json").

    The JSON protocol's object is {"action": <tool name>, "arguments": {...}}; its schema is a oneOf
    with one branch per tool, so a constrained decoder can only emit a well-formed action.
    """
    names = TOOLSETS[toolset]
    if protocol == "tools":
        return [{"type": "function",
                 "function": {"name": n, "description": TOOL_SPECS[n][0], "parameters": TOOL_SPECS[n][1]}}
                for n in names]
    if protocol == "json":
        branches = [{"type": "object",
                     "description": TOOL_SPECS[n][0],
                     "properties": {"action": {"const": n}, "arguments": TOOL_SPECS[n][1]},
                     "required": ["action", "arguments"], "additionalProperties": False}
                    for n in names]
        return [{"$schema": "https://json-schema.org/draft/2020-12/schema",
                 "title": f"{toolset} action", "oneOf": branches}]
    raise ValueError(f"unknown protocol {protocol!r}; choose 'tools' or 'json'")
