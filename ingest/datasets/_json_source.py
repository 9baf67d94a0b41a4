"""Reading JSON arrays and JSONL files record by record, keeping each record's line number."""
from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trajscope.format import RecordError, check_nesting, loads_bounded, too_deep

from ._errors import DatasetError

_decoder = json.JSONDecoder()
_WHITESPACE = " \t\r\n"


@dataclass(frozen=True)
class SourceRecord:
    """One decoded record and where it starts (1-based line) in its file."""

    path: Path
    line: int
    value: Any

    def error(self, message: str, field: str | None = None) -> DatasetError:
        """A DatasetError pointing at this record."""
        return DatasetError(self.path, message, line=self.line, field=field)


def _dataset_error(exc: RecordError) -> DatasetError:
    """The nesting limit's RecordError as this package's error (same file, line, field and message)."""
    return DatasetError(exc.path, exc.message, line=exc.line, field=exc.field)


def _skip_ws(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in _WHITESPACE:
        pos += 1
    return pos


def _json_array(path: Path, text: str) -> Iterator[SourceRecord]:
    # Decode element by element so that every record knows its line (json.load would not).
    pos = _skip_ws(text, 0)
    if pos >= len(text) or text[pos] != "[":
        raise DatasetError(path, "expected a JSON array of records", line=text.count("\n", 0, pos) + 1)
    pos = _skip_ws(text, pos + 1)
    line, counted = 1, 0
    if pos < len(text) and text[pos] == "]":
        return
    while True:
        line += text.count("\n", counted, pos)
        counted = pos
        try:
            value, end = _decoder.raw_decode(text, pos)
            check_nesting(text[pos:end], path=path, line=line)
        except RecursionError:
            raise _dataset_error(too_deep(text[pos:], path=path, line=line)) from None
        except RecordError as exc:
            raise _dataset_error(exc) from None
        except json.JSONDecodeError as exc:
            raise DatasetError(path, f"not valid JSON ({exc.msg})", line=exc.lineno) from None
        yield SourceRecord(path, line, value)
        pos = _skip_ws(text, end)
        if pos < len(text) and text[pos] == ",":
            pos = _skip_ws(text, pos + 1)
            continue
        if pos < len(text) and text[pos] == "]":
            return
        raise DatasetError(path, "expected ',' or ']' between records", line=text.count("\n", 0, pos) + 1)


def _jsonl(path: Path, text: str) -> Iterator[SourceRecord]:
    for lineno, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            value = loads_bounded(raw, path=path, line=lineno)
        except RecordError as exc:
            raise _dataset_error(exc) from None
        except json.JSONDecodeError as exc:
            raise DatasetError(path, f"not valid JSON ({exc.msg})", line=lineno) from None
        yield SourceRecord(path, lineno, value)


def read_text(path: str | Path) -> str:
    """A file's UTF-8 text, or a DatasetError saying why it cannot be read."""
    path = Path(path)
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DatasetError(path, "file not found") from None
    except UnicodeDecodeError as exc:
        raise DatasetError(path, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise DatasetError(path, exc.strerror or str(exc)) from None


def iter_records(path: str | Path) -> Iterator[SourceRecord]:
    """Records of a `.jsonl` file (one per line) or of a JSON array file, with line numbers."""
    path = Path(path)
    text = read_text(path)
    stripped = text.lstrip()
    if path.suffix == ".jsonl" or (stripped.startswith("{") and path.suffix != ".json"):
        return _jsonl(path, text)
    return _json_array(path, text)


def load_records(path: str | Path) -> list[SourceRecord]:
    """All records of a JSON array or JSONL file."""
    return list(iter_records(path))


def first_record(path: str | Path) -> Any:
    """The first record of a JSON array or JSONL file (None for an empty file), for format sniffing."""
    for record in iter_records(path):
        return record.value
    return None
