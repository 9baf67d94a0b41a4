"""Validating a tool call's arguments into the values the tools take, with messages for the agent."""
from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ._toolsets import TOOL_SPECS

# Accepted besides the schema names, because models commonly emit them.
_ALIASES = {"read": {"chunk_ids": "chunk_id"}, "read_chunk": {"chunk_ids": "chunk_id"}}


class ArgumentError(ValueError):
    """Arguments the agent must correct; the message is shown to it verbatim."""


def expected_signature(tool: str) -> str:
    props = TOOL_SPECS[tool][1]["properties"]
    return f"{tool}({', '.join(props)})"


def named_arguments(tool: str, args: Any) -> dict[str, Any]:
    """args as a dict holding exactly the tool's parameter names (aliases mapped)."""
    if not isinstance(args, Mapping):
        raise ArgumentError(f"{tool} takes an object of named arguments, got {type(args).__name__}; "
                            f"expected {expected_signature(tool)}.")
    schema = TOOL_SPECS[tool][1]
    aliases = _ALIASES.get(tool, {})
    named = {aliases.get(str(k), str(k)): v for k, v in args.items()}
    unknown = sorted(set(named) - set(schema["properties"]))
    missing = [k for k in schema["required"] if k not in named]
    if unknown or missing:
        problems = ([f"missing {', '.join(missing)}"] if missing else []) + (
            [f"unexpected {', '.join(unknown)}"] if unknown else [])
        raise ArgumentError(f"{tool}: {'; '.join(problems)}; expected {expected_signature(tool)}.")
    return named


def text_argument(tool: str, name: str, value: Any) -> str:
    """A non-empty string argument, stripped."""
    if not isinstance(value, str):
        raise ArgumentError(f"{tool}: {name} must be a string, got {type(value).__name__}.")
    if not value.strip():
        raise ArgumentError(f"{tool}: {name} is empty.")
    return value.strip()


def keyword_list(tool: str, value: Any) -> list[str]:
    """Keywords from a list of strings or one space/comma-separated string."""
    if isinstance(value, str):
        words = [w for w in re.split(r"[\s,]+", value) if w]
    elif isinstance(value, list) and all(isinstance(v, str) for v in value):
        words = [w for v in value for w in v.split() if w]
    else:
        raise ArgumentError(f"{tool}: keywords must be a list of strings or a string.")
    if not words:
        raise ArgumentError(f"{tool}: keywords are empty.")
    return words


def chunk_id_list(tool: str, value: Any, known: Mapping[str, Any]) -> list[str]:
    """Chunk ids from a string or a list; a string that is not an id is split on commas."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = str(value)  # a numeric id the model emitted without quotes
    if isinstance(value, str):
        stripped = value.strip().strip("\"'[]")
        ids = [stripped] if stripped in known else [p.strip().strip("\"'") for p in stripped.split(",")]
    elif isinstance(value, list) and all(isinstance(v, (str, int)) and not isinstance(v, bool) for v in value):
        ids = [str(v).strip() for v in value]
    else:
        raise ArgumentError(f"{tool}: chunk_id must be a string or a list of strings.")
    ids = list(dict.fromkeys(i for i in ids if i))
    if not ids:
        raise ArgumentError(f"{tool}: chunk_id is empty.")
    return ids
