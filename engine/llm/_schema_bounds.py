"""Structured replies that can always close: every free string of a JSON Schema bounded (maxLength) so that a
reply filling all of them still ends, braces and quotes included, within the request's max_tokens."""
from __future__ import annotations

from typing import Any

# Tokens a reply spends beside its free strings: braces, quotes, commas, and per property its key and the
# value of an enum or constant (a few tokens each; 8 leaves room for long keys and option names).
SKELETON_TOKENS = 16
TOKENS_PER_PROPERTY = 8
# An array without maxItems gets this one: a grammar that allows any number of items never has to close.
ARRAY_ITEMS = 8
_BRANCHES = ("anyOf", "oneOf")


def _free(schema: dict[str, Any]) -> bool:
    return schema.get("type") == "string" and not ({"enum", "const", "pattern"} & schema.keys())


def _walk(schema: Any) -> tuple[int, int]:
    """(free strings, properties) inside one branch of a schema."""
    if not isinstance(schema, dict):
        return 0, 0
    if _free(schema):
        return 1, 0
    strings, props = 0, 0
    for key, value in schema.items():
        if key == "properties" and isinstance(value, dict):
            props += len(value)
            for sub in value.values():
                s, p = _walk(sub)
                strings, props = strings + s, props + p
        elif key == "items":
            s, p = _walk(value)
            times = schema["maxItems"] if isinstance(schema.get("maxItems"), int) else ARRAY_ITEMS
            strings, props = strings + s * times, props + p * times
        elif key in _BRANCHES and isinstance(value, list) and value:  # one alternative is taken: the costliest
            alternatives = [_walk(v) for v in value]
            strings += max(s for s, _ in alternatives)
            props += max(p for _, p in alternatives)
    return strings, props


def _bounded(schema: Any, chars: int) -> Any:
    if not isinstance(schema, dict):
        return schema
    if _free(schema):
        limit = schema.get("maxLength")
        return {**schema, "maxLength": min(limit, chars) if isinstance(limit, int) else chars}
    out = dict(schema)
    if isinstance(schema.get("properties"), dict):
        out["properties"] = {k: _bounded(v, chars) for k, v in schema["properties"].items()}
    if "items" in schema:
        out["items"] = _bounded(schema["items"], chars)
        if not isinstance(schema.get("maxItems"), int):
            out["maxItems"] = ARRAY_ITEMS
    for key in _BRANCHES:
        if isinstance(schema.get(key), list):
            out[key] = [_bounded(v, chars) for v in schema[key]]
    return out


def string_budget(schema: dict[str, Any], max_tokens: int) -> int:
    """Characters each free string may hold so that the schema's most demanding branch fits max_tokens (a
    character costs at most one token): what the skeleton leaves, shared by that branch's free strings."""
    branches = next((schema[k] for k in _BRANCHES if isinstance(schema.get(k), list)), [schema])
    shares = []
    for branch in branches:
        strings, props = _walk(branch)
        if strings:
            shares.append((max_tokens - SKELETON_TOKENS - TOKENS_PER_PROPERTY * props) // strings)
    return max(1, min(shares, default=max_tokens))


def bound_strings(schema: dict[str, Any], max_tokens: int) -> dict[str, Any]:
    """A copy of schema whose free strings (no enum, const or pattern) each carry maxLength = string_budget,
    or their own smaller one; anyOf / oneOf branches bounded alike."""
    chars = string_budget(schema, max_tokens)
    for key in _BRANCHES:
        if isinstance(schema.get(key), list):
            return {**schema, key: [_bounded(branch, chars) for branch in schema[key]]}
    return _bounded(schema, chars)


__all__ = ["SKELETON_TOKENS", "TOKENS_PER_PROPERTY", "bound_strings", "string_budget"]
