"""Tool names -> canonical actions (a documented, overridable table) and canonical step construction."""
from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from trajscope.format import (
    READ_KIND,
    SEARCH_KINDS,
    Candidate,
    FinalStep,
    KeywordSearchStep,
    Passage,
    ReadStep,
    SearchStep,
    SemanticSearchStep,
    Step,
    ToolStep,
    loads_bounded,
)

from ._fields import Where

# Lower-cased source tool name -> canonical action. Users override or extend it with `tool_map`.
DEFAULT_TOOL_MAP: dict[str, str] = {
    "search": "search",
    "web_search": "search",
    "search_web": "search",
    "retrieve": "search",
    "retrieval": "search",
    "retriever": "search",
    "hybrid_search": "search",
    "wikipedia_search": "search",
    "keyword_search": "keyword_search",
    "bm25_search": "keyword_search",
    "lexical_search": "keyword_search",
    "semantic_search": "semantic_search",
    "dense_search": "semantic_search",
    "vector_search": "semantic_search",
    "read": "read",
    "read_chunk": "read",
    "chunk_read": "read",
    "read_document": "read",
    "get_document": "read",
    "open": "read",
    "final": "final",
    "finish": "final",
    "final_answer": "final",
    "answer": "final",
    "submit": "final",
    "submit_answer": "final",
}

# A `lookup` (a sentence inside the page already open) is no read: it has no entry, so it stays a tool.
# ReAct-family logs (FireAct, Reflexion, AutoAct): Search[...] returns page text itself, Retrieve[entity]
# opens a page (a read).
REACT_TOOL_MAP: dict[str, str] = {
    **{k: v for k, v in DEFAULT_TOOL_MAP.items() if k != "retrieve"},
    "bingsearch": "search",
    "retrieve": "read",
}

CANONICAL_ACTIONS = (*SEARCH_KINDS, READ_KIND, "final")
# A tool-map target that keeps a tool generic (neither search, read nor final), overriding a default.
GENERIC_TOOL = "tool"
SEARCH_ACTIONS = SEARCH_KINDS
_SEARCH_TYPES = {"search": SearchStep, "keyword_search": KeywordSearchStep, "semantic_search": SemanticSearchStep}
_QUERY_KEYS = ("query", "q", "search_query", "keywords", "keyword", "text", "input")
_CHUNK_KEYS = ("chunk_ids", "chunk_id", "ids", "id", "doc_ids", "doc_id", "document_id", "document_ids")
# What a read of a file, page or URL names when it has no chunk id (ATIF / Claude Code `Read(file_path)`,
# a `fetch(url)`): the passage is known by that locator.
_LOCATOR_KEYS = ("file_path", "filepath", "path", "filename", "file", "url", "uri", "page", "page_title", "title")
_ANSWER_KEYS = ("answer", "final_answer", "response", "result", "text")


def merged_tool_map(overrides: Mapping[str, str] | None,
                    base: Mapping[str, str] = DEFAULT_TOOL_MAP) -> dict[str, str]:
    """A format's default table updated with user overrides (keys compared case-insensitively)."""
    table = dict(base)
    for name, action in (overrides or {}).items():
        if action not in (*CANONICAL_ACTIONS, GENERIC_TOOL):
            raise ValueError(f"tool map: {name!r} -> {action!r} is not one of "
                             f"{', '.join((*CANONICAL_ACTIONS, GENERIC_TOOL))}")
        table[name.lower()] = action
    return table


def canonical_action(tool_name: str | None, table: Mapping[str, str]) -> str | None:
    """The canonical action of a tool name, or None when the table has no entry (or maps it to `tool`)."""
    action = table.get(tool_name.strip().lower()) if tool_name else None
    return None if action == GENERIC_TOOL else action


def _first(args: Mapping[str, Any], keys: tuple[str, ...], sole_value: bool = True) -> Any:
    for key in keys:
        if args.get(key) is not None:
            return args[key]
    if sole_value and len(args) == 1:
        return next(iter(args.values()))
    return None


def query_of(args: Mapping[str, Any]) -> str | None:
    """The search query in a tool's arguments (a keyword list is joined with spaces)."""
    value = _first(args, _QUERY_KEYS)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return " ".join(value)
    return value if isinstance(value, str) else None


def chunk_ids_of(args: Mapping[str, Any]) -> list[str]:
    """Chunk ids named in a read tool's arguments (as strings); else the file, page or URL it names."""
    value = _first(args, _CHUNK_KEYS, sole_value=False)
    if value is None:
        value = _first(args, _LOCATOR_KEYS, sole_value=False)
    if isinstance(value, (str, int)) and not isinstance(value, bool):
        return [str(value)]
    if isinstance(value, list):
        return [str(v) for v in value if isinstance(v, (str, int)) and not isinstance(v, bool)]
    return []


def answer_of(args: Mapping[str, Any]) -> str | None:
    """The answer in a final tool's arguments."""
    value = _first(args, _ANSWER_KEYS)
    return value if isinstance(value, str) else None


def make_step(
    action: str | None,
    *,
    tool_name: str | None,
    args: dict[str, Any],
    observation: str | None = None,
    query: str | None = None,
    candidates: list[Candidate] | None = None,
    chunk_ids: list[str] | None = None,
    passages: list[Passage] | None = None,
    answer: str | None = None,
    **common: Any,
) -> Step:
    """One canonical step; a tool with no canonical action becomes a generic `tool` step."""
    base = dict(tool_name=tool_name, args=args, observation=observation, **common)
    if action in _SEARCH_TYPES:
        return _SEARCH_TYPES[action](**base, query=query if query is not None else query_of(args),
                                     candidates=candidates or [])
    if action == "read":
        ids = chunk_ids if chunk_ids is not None else chunk_ids_of(args)
        if passages is None and ids and observation and observation.strip():
            # The tool returned text for the ids it was given: those passages entered the context (the
            # text is theirs when there is one id). Without this a read that worked counted as failed.
            passages = [Passage(chunk_id=i, text=observation if len(ids) == 1 else None) for i in ids]
        return ReadStep(**base, chunk_ids=ids, passages=passages or [])
    if action == "final":
        return FinalStep(**base, answer=answer if answer is not None else answer_of(args))
    return ToolStep(**base)


def parse_arguments(value: Any, where: Where) -> dict[str, Any]:
    """Tool-call arguments as an object (JSON-encoded strings decoded; a bare string kept as `input`)."""
    if value is None:
        return {}
    if isinstance(value, str):  # OpenAI-style JSON-encoded arguments, or a bare string argument
        try:
            parsed = loads_bounded(value, path=where.path, line=where.line, field=where.prefix or None)
        except json.JSONDecodeError:
            return {"input": value}
        return parsed if isinstance(parsed, dict) else {"input": parsed}
    if isinstance(value, dict):
        return value
    raise where.error(f"expected an object or JSON string of arguments, got {type(value).__name__}")
