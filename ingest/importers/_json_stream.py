"""Streaming JSON readers with line numbers: JSONL lines and the items of one large JSON document."""
from __future__ import annotations

import codecs
import json
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from trajscope.format import (
    MAX_LINE_BYTES,
    RecordError,
    bounded_lines,
    check_nesting,
    loads_bounded,
    open_input,
    skip_bom,
    too_deep,
)

# One record (a JSONL line, or one item of a document) may not exceed the line-size limit; memory stays bounded.
MAX_RECORD_BYTES = MAX_LINE_BYTES
_READ_SIZE = 1 << 16
_COMPACT_AT = 1 << 20
_decoder = json.JSONDecoder()


def check_text(path: Path, head: bytes) -> None:
    """Refuse binary input early, with a clear error, instead of a confusing JSON message."""
    if b"\x00" in head:
        raise RecordError(path, 1, None, "binary data (NUL bytes), not a JSON/JSONL/text log")
    try:
        codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
    except UnicodeDecodeError as exc:
        line = head[: exc.start].count(b"\n") + 1
        raise RecordError(path, line, None,
                          f"not UTF-8 text (byte {exc.start}): binary or wrongly encoded file") from None


def _loads_line(path: Path, lineno: int, raw: bytes) -> Any:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RecordError(path, lineno, None,
                          f"not UTF-8 text at byte {exc.start} of the line (binary data?)") from None
    try:
        return loads_bounded(text, path=path, line=lineno)
    except json.JSONDecodeError as exc:
        cut = exc.pos >= len(text.rstrip()) - 1 or exc.msg.startswith("Unterminated string")
        raise RecordError(path, lineno, None, f"{'truncated' if cut else 'malformed'} JSON: {exc.msg} "
                          f"(column {exc.colno})") from None


def iter_jsonl(path: Path, fh: IO[bytes] | None = None) -> Iterator[tuple[int, Any]]:
    """Yield (line number, parsed value) for every non-blank line; a line over the limit is an error."""
    own = fh is None
    fh = fh or open_input(path)
    try:
        skip_bom(fh)
        check_text(path, fh.read(8192))
        skip_bom(fh)
        for lineno, raw in enumerate(bounded_lines(fh, path, limit=MAX_RECORD_BYTES), start=1):
            if raw.strip():
                yield lineno, _loads_line(path, lineno, raw)
    finally:
        if own:
            fh.close()


class _DocumentScanner:
    """Reads one JSON document piece by piece: punctuation by hand, values with raw_decode."""

    def __init__(self, path: Path, fh: IO[bytes]):
        self.path, self.fh = path, fh
        self.decoder = codecs.getincrementaldecoder("utf-8")()
        self.buf, self.pos, self.line, self.eof = "", 0, 1, False

    def _fill(self, size: int = _READ_SIZE) -> bool:
        if self.eof:
            return False
        raw = self.fh.read(size)
        if b"\x00" in raw:
            raise RecordError(self.path, self.line, None, "binary data (NUL bytes) inside the JSON document")
        try:
            text = self.decoder.decode(raw, final=not raw)
        except UnicodeDecodeError:
            raise RecordError(self.path, self.line, None, "not UTF-8 text (binary data?)") from None
        if not raw:
            self.eof = True
        if self.pos > _COMPACT_AT:
            self.buf, self.pos = self.buf[self.pos:], 0
        self.buf += text
        return bool(raw)

    def _advance(self, to: int) -> None:
        self.line += self.buf.count("\n", self.pos, to)
        self.pos = to

    def peek(self) -> str | None:
        """The next non-blank character, or None at end of file."""
        while True:
            i = self.pos
            n = len(self.buf)
            while i < n and self.buf[i] in " \t\r\n":
                i += 1
            self._advance(i)
            if i < n:
                return self.buf[i]
            if not self._fill():
                return None

    def expect(self, chars: str, context: str | None) -> str:
        ch = self.peek()
        if ch is None:
            raise RecordError(self.path, self.line, context,
                              f"truncated JSON document: expected {chars!r}, got end of file")
        if ch not in chars:
            raise RecordError(self.path, self.line, context, f"malformed JSON: expected one of {chars!r}, got {ch!r}")
        self._advance(self.pos + 1)
        return ch

    def value(self, context: str | None) -> tuple[int, Any]:
        """Decode the next complete JSON value, reading more input until it is whole."""
        if self.peek() is None:
            raise RecordError(self.path, self.line, context,
                              "truncated JSON document: expected a value, got end of file")
        read_size = _READ_SIZE
        while True:
            try:
                value, end = _decoder.raw_decode(self.buf, self.pos)
            except RecursionError:
                raise too_deep(self.buf[self.pos:], path=self.path, line=self.line, field=context) from None
            except json.JSONDecodeError as exc:
                near_end = exc.pos >= len(self.buf) - 64 or exc.msg.startswith("Unterminated string")
                if near_end and not self.eof:
                    if len(self.buf) - self.pos + read_size > MAX_RECORD_BYTES:
                        raise RecordError(self.path, self.line, context,
                                          f"one record exceeds {MAX_RECORD_BYTES // (1024 * 1024)} MB") from None
                    self._fill(read_size)
                    read_size = min(read_size * 2, 16 * 1024 * 1024)
                    continue
                line = self.line + self.buf.count("\n", self.pos, min(exc.pos, len(self.buf)))
                what = "truncated JSON document" if self.eof and near_end else "malformed JSON"
                raise RecordError(self.path, line, context, f"{what}: {exc.msg}") from None
            start_line = self.line
            check_nesting(self.buf[self.pos:end], path=self.path, line=start_line, field=context)
            self._advance(end)
            return start_line, value

    def string(self, context: str | None) -> str:
        line, key = self.value(context)
        if not isinstance(key, str):
            raise RecordError(self.path, line, context, "malformed JSON: object key is not a string")
        return key


def iter_document(path: Path, stream_keys: frozenset[str] = frozenset()) -> Iterator[tuple[int, str, Any]]:
    """Yield (line, key, value) for the top level of one JSON document without loading it whole.

    Top-level array items get keys "[0]", "[1]", ...; an object member named in `stream_keys` whose value
    is an array is itself streamed, one item at a time, with key "member[i]".
    """
    with open_input(path) as fh:
        skip_bom(fh)
        check_text(path, fh.read(8192))
        skip_bom(fh)
        scan = _DocumentScanner(path, fh)
        opener = scan.expect("{[", None)
        if opener == "[":
            yield from _iter_array(scan, "")
        else:
            if scan.peek() == "}":
                scan.expect("}", None)
            else:
                while True:
                    key = scan.string(None)
                    scan.expect(":", key)
                    if key in stream_keys and scan.peek() == "[":
                        scan.expect("[", key)
                        yield from _iter_array(scan, key)
                    else:
                        line, value = scan.value(key)
                        yield line, key, value
                    if scan.expect(",}", key) == "}":
                        break
        if scan.peek() is not None:
            raise RecordError(path, scan.line, None, "malformed JSON: extra data after the document")


def _iter_array(scan: _DocumentScanner, name: str) -> Iterator[tuple[int, str, Any]]:
    if scan.peek() == "]":
        scan.expect("]", name or None)
        return
    i = 0
    while True:
        key = f"{name}[{i}]"
        line, value = scan.value(key)
        yield line, key, value
        i += 1
        if scan.expect(",]", key) == "]":
            return


def _first_line_is_json(path: Path) -> bool:
    with open_input(path) as fh:
        first = b""
        while not first.strip():
            first = fh.readline(MAX_RECORD_BYTES + 1)
            if not first:
                return False
    try:
        loads_bounded(first, path=path, line=1)
    except RecordError:
        return True  # JSON nested past the limit: the line reader reports it with its line and field
    except (json.JSONDecodeError, UnicodeDecodeError):
        return False
    return True


def iter_records(path: Path, stream_keys: frozenset[str] = frozenset(),
                 keyed_members: bool = False) -> Iterator[tuple[int, str | None, Any]]:
    """Records of a file: JSONL lines (key None), or the items of one JSON document.

    In a document, top-level array items ("[i]") and items of streamed members ("name[i]") are records;
    top-level object members are records only with `keyed_members` ({id: record} files), otherwise the
    object is one record (yielded whole, unless a streamed member was found in it).
    """
    with open_input(path) as fh:
        check_text(path, fh.read(8192))
    if _first_line_is_json(path):
        for line, value in iter_jsonl(path):
            yield line, None, value
        return
    whole: dict[str, Any] = {}
    streamed = False
    for line, key, value in iter_document(path, stream_keys):
        if key.startswith("[") or keyed_members:
            yield line, key, value
        elif "[" in key:
            streamed = True
            yield line, key, value
        else:
            whole[key] = value
    if whole and not streamed:
        yield 1, None, whole


def iter_whole_documents(path: Path) -> Iterator[tuple[int, Any]]:
    """JSONL of documents, or one (multi-line) JSON document loaded whole under the record limit."""
    with open_input(path) as fh:
        check_text(path, fh.read(8192))
    if _first_line_is_json(path):
        yield from iter_jsonl(path)
        return
    size = path.stat().st_size
    if size > MAX_RECORD_BYTES:
        raise RecordError(path, 1, None, f"a single JSON document of {size // 2**20} MB exceeds the "
                          f"{MAX_RECORD_BYTES // 2**20} MB limit; export it as JSONL (one record per line)")
    text = path.read_bytes().decode("utf-8-sig", errors="strict")
    try:
        document = loads_bounded(text, path=path, line=1)
    except json.JSONDecodeError as exc:
        what = "truncated JSON document" if exc.pos >= len(text.rstrip()) - 1 else "malformed JSON"
        raise RecordError(path, exc.lineno, None, f"{what}: {exc.msg}") from None
    yield 1, document
