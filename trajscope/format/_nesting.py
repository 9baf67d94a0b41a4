"""The one nesting limit of every JSON (and YAML) reader: deeper input is a RecordError, never a RecursionError.

Real logs nest at most 17 levels (embedded JSON strings included); 100 leaves room for any honest
record and keeps every recursive walk of a decoded value far from Python's recursion limit (1,000).
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ._record_error import RecordError

NESTING_LIMIT = 100
# A string, or an unclosed one running to the end: possessive, so no search backtracks over it (linear).
_STRING = re.compile(rb'"[^"\\]*+(?:\\.[^"\\]*+)*+(?:"|\\?\Z)', re.S)
_NOT_BRACKET = bytes(b for b in range(256) if b not in b"[]{}")
_INNERMOST_PAIR = re.compile(rb"[\[{][\]}]")


def _deepest(text: str) -> tuple[int, str, int]:
    """Depth, field path (cut after 8 levels) and character offset of a JSON text's first deepest point."""
    steps: list[str | int] = []  # per open container: the key (object) or index (array) being read
    deepest, deepest_path, offset = 0, [], 0
    i, n, last_string = 0, len(text), ""
    while i < n:
        ch = text[i]
        if ch == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            last_string, i = text[i + 1:j], j
        elif ch in "{[":
            steps.append("" if ch == "{" else 0)
            if len(steps) > deepest:
                # copy at most 9 levels: a full copy per new depth would be quadratic in the depth
                deepest, deepest_path, offset = len(steps), steps[:min(len(steps) - 1, 9)], i
        elif ch in "}]" and steps:
            steps.pop()
        elif ch == ":" and steps and isinstance(steps[-1], str):
            steps[-1] = last_string
        elif ch == "," and steps and isinstance(steps[-1], int):
            steps[-1] += 1
        i += 1
    shown = "".join(f"[{s}]" if isinstance(s, int) else f".{s}" for s in deepest_path[:8]).lstrip(".")
    return deepest, shown + (".…" if len(deepest_path) > 8 else ""), offset


def nesting_of(data: bytes | str) -> tuple[int, str]:
    """How deep a JSON text nests, and the field path to its first deepest point (cut after 8 levels)."""
    depth, path, _ = _deepest(data.decode("utf-8", "replace") if isinstance(data, bytes) else data)
    return depth, path


def exceeds_nesting_limit(data: bytes | str) -> bool:
    """Whether a JSON text nests deeper than NESTING_LIMIT (C-speed passes; brackets in strings ignored)."""
    raw = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    if raw.count(b"{") + raw.count(b"[") <= NESTING_LIMIT:
        return False  # cannot nest deeper than it has openers: the common case costs two counts
    outside = _STRING.sub(b"", raw) if b'\\"' in raw else b"".join(raw.split(b'"')[0::2])
    brackets = outside.translate(None, _NOT_BRACKET)
    for _ in range(NESTING_LIMIT):  # each pass removes the innermost level
        brackets, removed = _INNERMOST_PAIR.subn(b"", brackets)
        if not brackets or not removed:
            return False  # fully reduced, or unbalanced (malformed: the decoder reports that)
    return bool(brackets)


def too_deep(data: bytes | str, *, path: str | Path, line: int, field: str | None = None) -> RecordError:
    """The error for a JSON text past the limit: file, line and field path of the deepest point, the limit.

    `line` is where the text starts; a newline inside it (a pretty-printed document) moves the line on.
    """
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    depth, inner, offset = _deepest(text)
    where = ".".join(p for p in (field, inner) if p).replace(".[", "[") or None
    return RecordError(path, line + text.count("\n", 0, offset), where,
                       f"nested {depth} levels deep, past the nesting limit of {NESTING_LIMIT} levels")


def check_nesting(data: bytes | str, *, path: str | Path, line: int, field: str | None = None) -> None:
    """Raise a RecordError when a JSON text nests deeper than NESTING_LIMIT."""
    if exceeds_nesting_limit(data):
        raise too_deep(data, path=path, line=line, field=field)


def loads_bounded(data: bytes | str, *, path: str | Path, line: int, field: str | None = None) -> Any:
    """json.loads under the nesting limit; a syntax error is left to the caller (json.JSONDecodeError)."""
    try:
        value = json.loads(data)
    except RecursionError:
        raise too_deep(data, path=path, line=line, field=field) from None
    check_nesting(data, path=path, line=line, field=field)
    return value
