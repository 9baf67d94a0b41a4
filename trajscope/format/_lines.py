"""The line-size limit of every JSONL reader, and the bounded line reader that enforces it."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import IO

from ._record_error import RecordError
from ._side_files import check_regular_file

# One JSONL line (one record) may not exceed this; a reader never holds more of a line than this.
MAX_LINE_BYTES = 64 * 1024 * 1024
_SKIP_CHUNK = 1 << 20


def _size_mb(n: int) -> str:
    return f"{n / 2**20:,.1f} MB"


def _rest_of_line(fh: IO[bytes]) -> int:
    """Bytes up to and including the next newline, read in chunks and dropped (the size, not the data)."""
    skipped = 0
    while chunk := fh.readline(_SKIP_CHUNK):
        skipped += len(chunk)
        if chunk.endswith(b"\n"):
            break
    return skipped


def line_too_long(path: str | Path, line: int, size: int, limit: int = MAX_LINE_BYTES) -> RecordError:
    """The one message for a line over the limit: file, line, its size and the limit."""
    stated = f"{limit // 2**20} MB ({limit:,} bytes)" if limit >= 2**20 else f"{limit:,} bytes"
    return RecordError(path, line, None, f"line of {_size_mb(size)} is past the line-size limit of {stated} "
                       "per record; split the record or export it as smaller records")


def bounded_lines(fh: IO[bytes], path: str | Path, first_line: int = 1,
                  limit: int = MAX_LINE_BYTES) -> Iterator[bytes]:
    """Every line of fh (newline kept), holding at most `limit` + 2 bytes of one; a longer line is a
    RecordError naming file, line, its size and the limit."""
    lineno = first_line
    while raw := fh.readline(limit + 2):  # + 2: a line of `limit` bytes and its CR LF
        if len(raw) > limit:
            ended = raw.endswith(b"\n")
            size = len(raw.rstrip(b"\r\n")) if ended else len(raw) + _rest_of_line(fh)
            if size > limit:
                raise line_too_long(path, lineno, size, limit)
        yield raw
        lineno += 1


UTF8_BOM = b"\xef\xbb\xbf"


def skip_bom(fh: IO[bytes]) -> int:
    """Go to the start of fh's text: past a UTF-8 byte-order mark (Windows editors write one), else 0."""
    fh.seek(0)
    if fh.read(3) == UTF8_BOM:
        return 3
    fh.seek(0)
    return 0


def open_input(path: str | Path) -> IO[bytes]:
    """An input file opened for reading bytes, positioned past a UTF-8 byte-order mark; a FIFO or device is
    refused by type before it is opened (SideFileError)."""
    check_regular_file(path, "input")
    fh = open(path, "rb")
    skip_bom(fh)
    return fh
