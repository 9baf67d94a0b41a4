"""Gold answers in the shapes logs store them: a string, a list, `{'target': [...]}` (JSON or a Python literal).

RL rollouts and process-reward sets often write the gold as the `str()` of a Python dict or list
(`"{'target': ['Marion']}"`); such text is parsed with `ast.literal_eval`, never evaluated.
"""
from __future__ import annotations

import ast
import json
from typing import Any

# Keys of a gold object that hold the answer and its aliases, in the order they are tried.
_GOLD_OBJECT_KEYS = ("target", "targets", "answer", "answers", "gold", "golden_answers", "ground_truth", "value",
                     "normalized_aliases", "aliases")
_LITERAL_START = ("{", "[", "(")
_MAX_LITERAL = 100_000  # literal_eval of a longer string is not attempted: it stays the gold text itself


def _parsed(text: str) -> Any:
    """A string that encodes a dict or list (JSON or a Python literal) as its value; any other text as is."""
    stripped = text.strip()
    if not stripped.startswith(_LITERAL_START) or len(stripped) > _MAX_LITERAL:
        return text
    try:
        return json.loads(stripped)
    except ValueError:
        pass
    try:
        return ast.literal_eval(stripped)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return text


def _scalar(value: Any) -> str | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str) and value.strip():
        return value.strip()
    return None


def gold_strings(value: Any, _depth: int = 0) -> list[str]:
    """Every gold answer a field holds, first the gold then its aliases, without repeats; [] when none."""
    if _depth > 4:
        return []
    if isinstance(value, str):
        parsed = _parsed(value)
        if parsed is not value and not isinstance(parsed, str):
            return gold_strings(parsed, _depth + 1)
    one = _scalar(value)
    if one is not None:
        return [one]
    out: list[str] = []
    if isinstance(value, dict):
        for key in _GOLD_OBJECT_KEYS:
            if value.get(key) is not None:
                out.extend(gold_strings(value[key], _depth + 1))
    elif isinstance(value, (list, tuple)):
        for item in value:
            out.extend(gold_strings(item, _depth + 1))
    return list(dict.fromkeys(out))
