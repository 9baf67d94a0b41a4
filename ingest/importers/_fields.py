"""Typed access to fields of a decoded source record; a wrong type names file, line and field."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trajscope.format import RecordError

_MISSING = object()


@dataclass(frozen=True)
class Where:
    """The source location of a record: file, line and the field path that leads to it."""

    path: Path
    line: int
    prefix: str = ""

    def at(self, field: str | int) -> Where:
        """The location of a child field."""
        name = f"[{field}]" if isinstance(field, int) else field
        joined = f"{self.prefix}{name}" if isinstance(field, int) or not self.prefix else f"{self.prefix}.{name}"
        return Where(self.path, self.line, joined)

    def error(self, message: str, field: str | int | None = None) -> RecordError:
        """A RecordError at this location (or at one of its fields)."""
        where = self.at(field) if field is not None else self
        return RecordError(self.path, self.line, where.prefix or None, message)


def _type_name(value: Any) -> str:
    return "null" if value is None else {dict: "object", list: "array", str: "string", bool: "boolean"}.get(
        type(value), type(value).__name__)


def lookup(obj: Any, dotted: str) -> Any:
    """Value at a dotted path ("a.b.0.c"; integers index lists), or None when any part is absent."""
    cur = obj
    for part in dotted.split("."):
        if isinstance(cur, dict):
            if part not in cur:
                return None
            cur = cur[part]
        elif isinstance(cur, list) and part.lstrip("-").isdigit():
            i = int(part)
            if not -len(cur) <= i < len(cur):
                return None
            cur = cur[i]
        else:
            return None
    return cur


def need_object(value: Any, where: Where) -> dict[str, Any]:
    """The value as a JSON object, or a RecordError."""
    if not isinstance(value, dict):
        raise where.error(f"expected an object, got {_type_name(value)}")
    return value


def need_list(value: Any, where: Where) -> list[Any]:
    """The value as a JSON array, or a RecordError."""
    if not isinstance(value, list):
        raise where.error(f"expected an array, got {_type_name(value)}")
    return value


def opt_list(obj: dict[str, Any], key: str, where: Where) -> list[Any]:
    """An optional array field (absent or null -> [])."""
    value = obj.get(key)
    return [] if value is None else need_list(value, where.at(key))


def opt_object(obj: dict[str, Any], key: str, where: Where) -> dict[str, Any]:
    """An optional object field (absent or null -> {})."""
    value = obj.get(key)
    return {} if value is None else need_object(value, where.at(key))


def opt_str(obj: dict[str, Any], key: str, where: Where) -> str | None:
    """An optional string field; a number is a wrong type, not silently converted."""
    value = obj.get(key)
    if value is None or isinstance(value, str):
        return value
    raise where.error(f"expected a string, got {_type_name(value)}", key)


def need_str(obj: dict[str, Any], key: str, where: Where) -> str:
    """A required non-empty string field."""
    value = obj.get(key, _MISSING)
    if value is _MISSING or value is None:
        raise where.error("missing required field", key)
    if not isinstance(value, str):
        raise where.error(f"expected a string, got {_type_name(value)}", key)
    if not value.strip():
        raise where.error("empty string", key)
    return value


def need_id(obj: dict[str, Any], keys: tuple[str, ...], where: Where) -> str:
    """The first present id field among `keys` (string or integer), as a string."""
    for key in keys:
        value = obj.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            raise where.error(f"expected a string or integer id, got {_type_name(value)}", key)
        if isinstance(value, str) and not value.strip():
            raise where.error("empty id", key)
        return str(value)
    raise where.error(f"missing id (looked for {', '.join(keys)})", keys[0])


def opt_number(obj: dict[str, Any], key: str, where: Where) -> float | None:
    """An optional number field (booleans are not numbers)."""
    value = obj.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise where.error(f"expected a number, got {_type_name(value)}", key)
    return float(value)


def opt_int(obj: dict[str, Any], key: str, where: Where) -> int | None:
    """An optional integer field; integral strings are accepted (OTLP encodes int64 as strings)."""
    value = obj.get(key)
    if value is None:
        return None
    if isinstance(value, str) and value.lstrip("-").isdigit():
        return int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise where.error(f"expected an integer, got {_type_name(value)}", key)
    return value


def score_value(value: Any, where: Where) -> float:
    """A judgment score: booleans become 1.0 / 0.0, numbers stay as they are."""
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)):
        return float(value)
    raise where.error(f"expected a boolean or number score, got {_type_name(value)}")


def as_text(value: Any) -> str | None:
    """Observation text of a tool result: strings as they are, anything else as compact JSON."""
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
