"""Output files of every command: never an input (the warehouse, its WAL, a file being read), through any
link; a missing folder, a full disk or a long name is one line, not a traceback."""
from __future__ import annotations

import os
import uuid
from collections.abc import Iterable
from pathlib import Path

from trajscope.runtime import sweep_dead_process_dirs

from .._file_check import WarehouseFileError, check_path_length
from .._file_lock import default_db_path

# The temp file an output is written to before it is renamed over the target, beside it.
TMP_PREFIX = ".trajscope-"


class OutputRefused(ValueError):
    """An output path that would overwrite an input or cannot be written; the message names it."""

    exit_code = 1


def _protected(reading: Iterable[str | Path | None]) -> list[Path]:
    paths = []
    for item in reading:
        if item is None:
            continue
        path = Path(item)
        # DuckDB keeps the warehouse's uncommitted changes beside it, in FILE.wal.
        paths += [path, path.with_name(path.name + ".wal")]
    return paths


def _same(a: Path, b: Path) -> bool:
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)  # hard links too
    except OSError:
        return False


def check_output_path(out: str | Path, *, reading: Iterable[str | Path | None] = (), db: str | Path | None = None,
                      what: str = "output") -> Path:
    """out, once it is safe to write: not the warehouse (db, default ./trajscope.duckdb), its WAL or any file
    in reading, by any link; its folder exists; its name fits. Raises OutputRefused (one line)."""
    out = Path(out)
    try:
        check_path_length(out, what)
    except WarehouseFileError as exc:
        raise OutputRefused(str(exc)) from None
    db_path = Path(db) if db is not None else default_db_path()
    for path in _protected([db_path, *reading]):
        if _same(out, path):
            raise OutputRefused(
                f"{out}: refused as the {what} file: it is {path}{' (through a link)' if out.is_symlink() else ''}, "
                "which this command reads; writing it would destroy it. Give another --out")
    if out.is_dir():
        raise OutputRefused(f"{out}: is a directory; give a file name as the {what}")
    folder = out.parent
    if not folder.is_dir():
        raise OutputRefused(f"{out}: the folder {folder} does not exist; create it first")
    return out


def write_output(out: str | Path, data: str | bytes, *, reading: Iterable[str | Path | None] = (),
                 db: str | Path | None = None) -> int:
    """Check out (check_output_path), then write data to it; an OS error (disk full, permission) is OutputRefused."""
    out = check_output_path(out, reading=reading, db=db)
    payload = data.encode() if isinstance(data, str) else data
    target = Path(os.path.realpath(out))
    try:
        if target.exists() and not target.is_file():
            # A device or pipe (/dev/stdout, /dev/full): written in place, never replaced.
            with open(target, "wb") as fh:
                fh.write(payload)
        else:
            # A regular file is written beside itself and renamed over, so a full disk leaves the old
            # content, and a link is followed to its target rather than replaced.
            # Named after this process (a killed export's file is swept by the next write into the folder)
            # and unique within it (two threads may write into one folder).
            sweep_dead_process_dirs(target.parent, TMP_PREFIX, files=True)
            tmp = target.with_name(f"{TMP_PREFIX}{os.getpid()}-{uuid.uuid4().hex[:8]}.tmp")
            try:
                with open(tmp, "wb") as fh:
                    fh.write(payload)
                os.replace(tmp, target)
            finally:
                tmp.unlink(missing_ok=True)
    except OSError as exc:
        reason = os.strerror(exc.errno) if exc.errno else str(exc)
        raise OutputRefused(f"{out}: cannot be written ({reason})") from None
    return len(payload)


__all__ = ["TMP_PREFIX", "OutputRefused", "check_output_path", "write_output"]
