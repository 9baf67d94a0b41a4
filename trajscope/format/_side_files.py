"""Files the user names beside the logs (mapping, tool map, patterns, questions, run matrix, lake marker):
refused by type before they are opened, read up to a size limit, never whole whatever their size."""
from __future__ import annotations

import os
import stat
from pathlib import Path

from ._record_error import RecordError

# A side file is written by hand or by a tool in kilobytes; 16 MB leaves room for any honest one.
SIDE_FILE_LIMIT = 16 * 1024 * 1024
_READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0)


class SideFileError(RecordError):
    """A side file that cannot be read as one: not a regular file, past its size limit, not UTF-8 text."""

    def __init__(self, path: str | Path, message: str):
        self.path, self.line, self.field, self.message = str(path), 0, None, message
        ValueError.__init__(self, f"{path}: {message}")


def file_kind(mode: int) -> str:
    """What a non-regular file is, in words ("a FIFO (named pipe)", "a character device", ...)."""
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


def check_regular_file(path: str | Path, what: str) -> os.stat_result:
    """The file's stat once it is a regular file; a FIFO (opening it would wait for a writer forever) or a
    device (/dev/zero never ends) is a SideFileError. A missing file raises FileNotFoundError as open does."""
    info = os.stat(path)
    if not stat.S_ISREG(info.st_mode):
        raise SideFileError(path, f"is {file_kind(info.st_mode)}, not a regular file; the {what} must be a file")
    return info


def _mb(n: int) -> str:
    return f"{n / 2**20:,.1f} MB"


def read_side_bytes(path: str | Path, what: str, limit: int = SIDE_FILE_LIMIT) -> bytes:
    """A regular file's bytes, at most `limit` of them: checked by type before it is opened, and again on
    the open descriptor (the name may have been swapped in between)."""
    info = check_regular_file(path, what)
    too_big = f"past the {what} size limit of {_mb(limit)} ({limit:,} bytes)"
    if info.st_size > limit:
        raise SideFileError(path, f"is {_mb(info.st_size)}, {too_big}")
    fd = os.open(path, _READ_FLAGS)
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise SideFileError(path, f"is not a regular file; the {what} must be a file")
        data = fh.read(limit + 1)
    if len(data) > limit:  # grew after the stat
        raise SideFileError(path, f"is more than {_mb(limit)}, {too_big}")
    return data


def read_side_text(path: str | Path, what: str, limit: int = SIDE_FILE_LIMIT) -> str:
    """read_side_bytes decoded as UTF-8 (a byte-order mark dropped); other bytes are a SideFileError."""
    data = read_side_bytes(path, what, limit)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise SideFileError(path, f"line {line}: byte {exc.start:,} is not UTF-8; the {what} must be UTF-8 "
                                  "text") from None


__all__ = ["SIDE_FILE_LIMIT", "SideFileError", "check_regular_file", "file_kind", "read_side_bytes",
           "read_side_text"]
