"""Room on disk for an ingest, checked before it writes: a load that runs out part-way would change the file."""
from __future__ import annotations

import errno
import os
import resource
from pathlib import Path

# What a load can write, measured with DuckDB 2.0. Into a side file (a new warehouse, or a copy of the existing
# one) the rows go straight into the file, compressed (0.15x-0.6x the input's JSON bytes), beside the batch files
# in the temp folder; twice the input bounds both. One transaction on the file itself (a log of one batch or
# less, or less than the file) spills every batch to DuckDB's temp folder beside the file and then writes the
# rows to the WAL before the checkpoint: 3.3x a 0.3 GB log into a 1.9 GB warehouse (batch file included), and
# more than 4.1x a 10 GB one (28 GB spilled and 11.6 GB of WAL when the disk ran out). The slack covers the
# catalog's metadata blocks.
ROOM_PER_INPUT_BYTE = 2
ROOM_PER_INPUT_BYTE_IN_PLACE = 5
ROOM_SLACK_BYTES = 16 * 2**20


class NoRoomForIngest(OSError):
    """The disk (or the process's file-size limit) leaves less room than the ingest may need; nothing written."""

    def __init__(self, message: str):
        OSError.__init__(self, errno.ENOSPC, message)
        self.message = message

    def __str__(self) -> str:
        return self.message


def room_needed(input_bytes: int, copy_bytes: int = 0, *, in_place: bool = False) -> int:
    """The bound on what loading `input_bytes` of logs writes beside and into the warehouse: in one transaction on
    it (in_place), or into a side file (a copy of `copy_bytes` when it copies the warehouse)."""
    per_byte = ROOM_PER_INPUT_BYTE_IN_PLACE if in_place else ROOM_PER_INPUT_BYTE
    return copy_bytes + per_byte * input_bytes + ROOM_SLACK_BYTES


def room_left(db: Path) -> tuple[int | None, str]:
    """Bytes the warehouse's WAL and growth may take (None: unknown) and where the bound comes from."""
    free: list[tuple[int, str]] = []
    try:
        vfs = os.statvfs(db.parent)
        free.append((vfs.f_bavail * vfs.f_frsize, f"free on the disk holding {db.parent}"))
    except OSError:
        pass
    soft, _ = resource.getrlimit(resource.RLIMIT_FSIZE)
    if soft != resource.RLIM_INFINITY:  # a file may not grow past it, the WAL included
        size = db.stat().st_size if db.exists() else 0
        free.append((max(0, soft - size), "left under this process's file-size limit (ulimit -f)"))
    return min(free) if free else (None, "")


def check_room(db: Path, input_bytes: int, copy_bytes: int = 0, *, in_place: bool = False) -> None:
    """NoRoomForIngest when the bound on what this ingest writes exceeds the room left."""
    left, where = room_left(db)
    needed = room_needed(input_bytes, copy_bytes, in_place=in_place)
    if left is not None and left < needed:
        mb = 2**20
        copy = f"a copy of the {copy_bytes / mb:.1f} MB warehouse, " if copy_bytes else ""
        times = f"{ROOM_PER_INPUT_BYTE_IN_PLACE} times" if in_place else "twice"
        raise NoRoomForIngest(
            f"{db}: not enough disk for this ingest: it may write up to {needed / mb:.1f} MB ({copy}{times} its "
            f"{input_bytes / mb:.1f} MB of logs plus {ROOM_SLACK_BYTES // mb} MB), {left / mb:.1f} MB is {where}; "
            "nothing was written: free some space or ingest fewer files at a time")


__all__ = [
    "ROOM_PER_INPUT_BYTE", "ROOM_PER_INPUT_BYTE_IN_PLACE", "ROOM_SLACK_BYTES", "NoRoomForIngest", "check_room",
    "room_left", "room_needed",
]
