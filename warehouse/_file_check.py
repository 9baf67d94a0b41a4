"""The checks a warehouse file passes before DuckDB opens it, and the one-line errors when it does not.

Stdlib only: the query worker process imports it without the package (see read/_query.py).
"""
from __future__ import annotations

import errno
import os
import stat
import subprocess
import sys
from pathlib import Path

# The exit status of a command whose --db is not a usable warehouse file (docs/security.md).
BAD_WAREHOUSE_EXIT = 3
# DuckDB's file starts with a 4,096-byte header: an 8-byte checksum, then these magic bytes.
_DUCKDB_MAGIC = b"DUCK"
_MAGIC_OFFSET = 8
_MIN_DUCKDB_BYTES = 3 * 4096  # the file header and two database headers
REBUILD_HINT = ("a warehouse holds nothing the logs lack: rebuild it by ingesting the log files it was built "
                "from into a new file (trajscope ingest LOG... --db NEW.duckdb)")
# What a file that is not DuckDB's starts with, to name it in the message.
_OTHER_FORMATS = ((b"SQLite format 3\x00", "a SQLite database"), (b"PAR1", "a Parquet file"),
                  (b"PK\x03\x04", "a zip archive"), (b"\x1f\x8b", "a gzip file"), (b"{", "JSON text"),
                  (b"[", "JSON text"))


class WarehouseFileError(ValueError):
    """The --db path is not a usable warehouse file; the message names the file and what is wrong."""

    exit_code = BAD_WAREHOUSE_EXIT


def _name_max(folder: Path) -> int:
    try:
        return os.pathconf(folder if folder.exists() else ".", "PC_NAME_MAX")
    except (OSError, ValueError):
        return 255


def check_path_length(path: Path, what: str = "warehouse") -> None:
    """WarehouseFileError when a component or the whole path is longer than the system allows."""
    shown = str(path) if len(str(path)) <= 120 else str(path)[:60] + "…" + str(path)[-40:]
    limit = _name_max(path.parent)
    for part in path.parts:
        if len(os.fsencode(part)) > limit:
            raise WarehouseFileError(
                f"{shown}: a name in this {what} path is {len(os.fsencode(part))} bytes long; the system "
                f"limit is {limit}")
    if len(os.fsencode(str(path))) >= 4096:
        raise WarehouseFileError(f"{shown}: the {what} path is {len(os.fsencode(str(path)))} bytes long; the "
                                 "system limit is 4095")


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _what_it_is(head: bytes) -> str:
    for magic, name in _OTHER_FORMATS:
        if head.startswith(magic):
            return name
    if head and not head.strip(b"\0"):
        return "zero bytes only (a sparse or wiped file)"
    try:
        head.decode("utf-8")
    except UnicodeDecodeError:
        return "not a DuckDB file"
    return "text" if head else "empty"


def check_warehouse_file(path: str | Path, *, create: bool = False, read_head: bool = True) -> Path:
    """The path, once it is fit for DuckDB to open: a readable regular DuckDB file (or, with create, none yet).

    Raises WarehouseFileError (one line naming the file) for a name over the system limit, a directory, a
    FIFO or device, an unreadable file, and a file that is not DuckDB's (SQLite, Parquet, text, empty,
    truncated). A missing file is the caller's to handle (FileNotFoundError) unless create. Without read_head
    only what stat tells is checked: for a file this process may hold open in DuckDB (file_sha256 says why).
    """
    path = Path(path)
    check_path_length(path)
    try:
        info = path.stat()
    except FileNotFoundError:
        if create:
            return path
        raise
    except OSError as exc:
        raise WarehouseFileError(f"{path}: cannot be used as a warehouse ({os.strerror(exc.errno or 0)})") from None
    if not stat.S_ISREG(info.st_mode):
        # Opening a FIFO would block forever, a device would be read or written raw.
        raise WarehouseFileError(f"{path}: is {_kind(info.st_mode)}, not a warehouse file")
    if info.st_size == 0:
        raise WarehouseFileError(f"{path}: is an empty file (0 bytes), not a warehouse; remove it to start a new "
                                 "warehouse there")
    if not read_head:
        return path
    try:
        with open(path, "rb") as fh:
            head = fh.read(_MIN_DUCKDB_BYTES)
    except OSError as exc:
        if exc.errno in (errno.EACCES, errno.EPERM):
            raise WarehouseFileError(f"{path}: cannot be read (permission denied)") from None
        raise WarehouseFileError(f"{path}: cannot be read ({os.strerror(exc.errno or 0)})") from None
    if head[_MAGIC_OFFSET:_MAGIC_OFFSET + 4] != _DUCKDB_MAGIC:
        what = _what_it_is(head[:64])
        if what == "empty":
            raise WarehouseFileError(f"{path}: is an empty file, not a warehouse")
        raise WarehouseFileError(f"{path}: is {what}, not a trajscope warehouse (a DuckDB file)")
    if len(head) < _MIN_DUCKDB_BYTES:
        raise WarehouseFileError(
            f"{path}: is a truncated DuckDB file ({info.st_size:,} bytes, shorter than its headers); {REBUILD_HINT}")
    return path


_SHA256_SCRIPT = """import hashlib, sys
with open(sys.argv[1], "rb") as fh:
    print(hashlib.file_digest(fh, "sha256").hexdigest())
"""


def file_sha256(path: str | Path) -> str:
    """sha256 of a warehouse file, read by a child process.

    DuckDB's lock is a POSIX record lock, and a process loses every such lock it holds on a file when it closes
    any descriptor of that file: hashing it here, under an open connection, would let another process write it.
    """
    return Sha256Child(path).result()


class Sha256Child:
    """file_sha256 begun now in its child process, so the caller can work meanwhile."""

    def __init__(self, path: str | Path):
        self.path = str(path)
        # Python's hashlib (OpenSSL) hashed a 1.9 GB warehouse in 1.3 s, coreutils' sha256sum in 5.3 s.
        self._child = subprocess.Popen([sys.executable, "-c", _SHA256_SCRIPT, self.path], stdout=subprocess.PIPE,
                                       stderr=subprocess.PIPE, text=True)

    def result(self) -> str:
        """The digest, once the child is done (OSError when hashing failed)."""
        out, err = self._child.communicate()
        if self._child.returncode != 0:
            last = (err.strip().splitlines() or ["no message"])[-1]
            raise OSError(errno.EIO, f"hashing failed: {last}", self.path)
        return out.strip()

    def cancel(self) -> None:
        """Stop the child if it is still hashing (its digest is no longer wanted)."""
        if self._child.poll() is None:
            self._child.kill()
        self._child.communicate()


def open_failure(path: Path, exc: BaseException) -> WarehouseFileError | None:
    """The WarehouseFileError a DuckDB error opening or reading path stands for (corrupt, unreadable), else None."""
    text = str(exc)
    first = text.splitlines()[0] if text else type(exc).__name__
    low = text.lower()
    if "checksum" in low or "corrupt" in low:
        return WarehouseFileError(f"{path}: the warehouse file is corrupt ({first}); {REBUILD_HINT}")
    if "not a valid duckdb database file" in low:
        return WarehouseFileError(f"{path}: not a DuckDB database file, so not a warehouse")
    if "newer version of duckdb" in low or "older version of duckdb" in low or "storage version" in low:
        return WarehouseFileError(f"{path}: written by another DuckDB version ({first})")
    if "permission denied" in low:
        return WarehouseFileError(f"{path}: cannot be opened (permission denied)")
    if "extension" in low and ("autoload" in low or "install" in low or "sqlite" in low):
        return WarehouseFileError(f"{path}: is not a DuckDB warehouse file (DuckDB would need an extension to "
                                  "read it, and extensions are never loaded)")
    if "cannot open file" in low or "could not read" in low or "failed to read" in low:
        return WarehouseFileError(f"{path}: cannot be opened as a warehouse ({first})")
    return None


__all__ = ["BAD_WAREHOUSE_EXIT", "REBUILD_HINT", "WarehouseFileError", "check_path_length", "check_warehouse_file",
           "Sha256Child", "file_sha256", "open_failure"]
