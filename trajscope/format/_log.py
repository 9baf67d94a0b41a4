"""Append-only JSONL logs: every line written, flushed and fsync'd; a torn last line repaired on open."""
from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Generic, TypeVar

from ._codec import RecordError
from ._redaction import redact_json_line

T = TypeVar("T")


class LogFileCorrupt(RuntimeError):
    """A line other than the last one is not a valid record: only a torn tail is repaired."""


@dataclass
class RecoveredLog(Generic[T]):
    """What an existing log holds once a torn tail is cut: its records and what the repair did."""

    path: Path
    records: list[T] = field(default_factory=list)
    truncated_bytes: int = 0
    torn_line: int | None = None  # the line number the cut tail began on
    size: int = 0  # bytes kept: where the next append starts
    lines: int = 0  # whole lines kept (blank ones included)

    def repair_note(self) -> str | None:
        """A one-line report of the repair, or None when the log was whole."""
        if not self.truncated_bytes:
            return None
        return (f"{self.path}: repaired a torn last line (line {self.torn_line}, {self.truncated_bytes} bytes "
                "cut: a write the kill interrupted); its record is redone")


def recover_log_file(path: str | Path, decode: Callable[..., T],
                     corrupt: type[Exception] = LogFileCorrupt) -> RecoveredLog[T]:
    """Records of an append-only log, truncating a torn tail in place (and fsync'ing the cut).

    `decode(raw, path=, line=)` raises RecordError for a bad line; a bad line before the last
    raises `corrupt` naming it.
    """
    path = Path(path)
    state: RecoveredLog[T] = RecoveredLog(path)
    if not path.exists():
        return state
    data = path.read_bytes()
    # Bytes after the last newline are a write the kill interrupted.
    good_end = data.rfind(b"\n") + 1
    lines = data[:good_end].split(b"\n")[:-1]
    kept_lines = len(lines)
    offset = 0
    for lineno, raw in enumerate(lines, start=1):
        if raw.strip():
            try:
                state.records.append(decode(raw, path=path, line=lineno))
            except RecordError as exc:
                if lineno < len(lines):
                    raise corrupt(f"{exc} (only a torn last line is repaired automatically)") from None
                good_end, kept_lines = offset, lineno - 1  # an unreadable last line is torn as well
        offset += len(raw) + 1
    state.truncated_bytes = len(data) - good_end
    if state.truncated_bytes:
        state.torn_line = kept_lines + 1
        with open(path, "r+b") as fh:
            fh.truncate(good_end)
            fh.flush()
            os.fsync(fh.fileno())
    state.size, state.lines = good_end, kept_lines
    return state


class AppendOnlyLog:
    """Appends whole lines durably: written, flushed and fsync'd before `append` returns."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fh = open(self.path, "ab")
        self.durable_size = self._fh.tell()  # bytes on disk up to the last fsync'd line
        self.written = 0

    def append(self, line: bytes) -> int:
        """Write one record's line; returns the log's durable size after it."""
        return self.append_many([line])

    def append_many(self, lines: Iterable[bytes]) -> int:
        """Write several lines with one write and one fsync (a group commit); returns the durable size."""
        chunk = []
        for line in lines:
            if b"\n" in line:
                raise ValueError("a log record must be a single line")
            chunk.append(redact_json_line(line) + b"\n")  # no key or key fragment reaches a log
        if not chunk:
            return self.durable_size
        self._fh.write(b"".join(chunk))
        self._fh.flush()
        os.fsync(self._fh.fileno())
        self.durable_size = self._fh.tell()
        self.written += len(chunk)
        return self.durable_size

    def close(self) -> None:
        """Close the file."""
        self._fh.close()
