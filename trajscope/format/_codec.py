"""Encoding, strict decoding with file/line/field errors, and the JSON Schema of the format."""
from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, TypeVar

import msgspec

from ._lines import bounded_lines, open_input
from ._nesting import check_nesting, too_deep
from ._record_error import RecordError
from ._records import Chunk, Question
from ._trajectory import Trajectory

_encoder = msgspec.json.Encoder()
_trajectory_decoder = msgspec.json.Decoder(Trajectory)
_PATH_RE = re.compile(r"at `\$(.*)`")
_UNKNOWN_RE = re.compile(r"unknown field `([^`]+)`")


def field_of(error: msgspec.ValidationError | msgspec.DecodeError) -> tuple[str | None, str]:
    """The dotted field path a msgspec error points at (None at the top level) and its bare message."""
    text = str(error)
    m = _PATH_RE.search(text)
    field = m.group(1).lstrip(".") if m else None
    unknown = _UNKNOWN_RE.search(text)
    if unknown:  # msgspec points at the enclosing object; name the offending field itself
        field = f"{field}.{unknown.group(1)}" if field else unknown.group(1)
    message = _PATH_RE.sub("", text).rstrip(" -")
    return (field or None), message


T = TypeVar("T")


def decode_strict(decoder: msgspec.json.Decoder[T], data: bytes | str, *, path: str | Path, line: int) -> T:
    """Decode with a typed decoder, turning any schema or syntax error into a RecordError."""
    try:
        value = decoder.decode(data)
    except RecursionError:
        raise too_deep(data, path=path, line=line) from None
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        field, message = field_of(exc)
        if not isinstance(exc, msgspec.ValidationError):  # a syntax error, not a schema error
            message = f"not valid JSON: {message}"
        raise RecordError(path, line, field, message) from None
    check_nesting(data, path=path, line=line)
    return value


def encode(record: msgspec.Struct) -> bytes:
    """Compact canonical JSON of a record (no trailing newline)."""
    return _encoder.encode(record)


def decode_trajectory(data: bytes | str, *, path: str | Path = "<input>", line: int = 1) -> Trajectory:
    """Decode one JSON trajectory, raising RecordError with the offending field."""
    return decode_strict(_trajectory_decoder, data, path=path, line=line)


@dataclass(frozen=True)
class DecodedLine:
    """A validated trajectory together with where it came from."""

    line: int
    trajectory: Trajectory


def iter_trajectories(path: str | Path) -> Iterator[DecodedLine]:
    """Stream a JSONL trajectory log, validating every non-blank line; memory is one line at a time."""
    with open_input(path) as fh:
        for lineno, raw in enumerate(bounded_lines(fh, path), start=1):
            if not raw.strip():
                continue
            yield DecodedLine(lineno, decode_trajectory(raw, path=path, line=lineno))


def looks_canonical(path: str | Path) -> bool:
    """Whether a file is a canonical log: its first record decodes, or names both identifying keys.

    A first line that is canonical but broken still counts, so its errors are reported as such.
    """
    with open_input(path) as fh:
        for raw in bounded_lines(fh, path):
            if raw.strip():
                try:
                    decode_trajectory(raw, path=path, line=1)
                except RecordError:
                    return b'"trajectory_id"' in raw and b'"schema_version"' in raw
                return True
    return False


def write_jsonl(records: list[msgspec.Struct] | Iterator[msgspec.Struct], out: IO[bytes]) -> int:
    """Write records as JSONL; returns the count."""
    n = 0
    for record in records:
        out.write(_encoder.encode(record) + b"\n")
        n += 1
    return n


def to_builtins(record: msgspec.Struct) -> Any:
    """The record as plain dicts and lists (what json.loads of its encoding gives)."""
    return msgspec.to_builtins(record)


def json_schema() -> dict[str, Any]:
    """JSON Schema (2020-12) of a trajectory log line, generated from the typed records."""
    (schema,), components = msgspec.json.schema_components([Trajectory], ref_template="#/$defs/{name}")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://trajscope.dev/schema/trajectory.v1.json",
        "title": "trajscope canonical trajectory, format v1",
        **schema,
        "$defs": components,
    }


def json_schema_text() -> str:
    """The committed schema file's exact text."""
    return json.dumps(json_schema(), indent=2, sort_keys=True) + "\n"


__all__ = [
    "Chunk",
    "DecodedLine",
    "Question",
    "RecordError",
    "decode_strict",
    "decode_trajectory",
    "field_of",
    "encode",
    "iter_trajectories",
    "json_schema",
    "json_schema_text",
    "looks_canonical",
    "to_builtins",
    "write_jsonl",
]
