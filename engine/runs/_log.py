"""The run's append-only JSONL log: torn-tail recovery on open, group-committed fsync'd appends."""
from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from trajscope.format import RecordError, Run, Trajectory, decode_trajectory, encode


T = TypeVar("T")


class LogCorrupt(RuntimeError):
    """A log line other than the last one is not a valid trajectory."""


@dataclass
class LogState:
    """What an existing log already holds."""

    trajectories: list[Trajectory] = field(default_factory=list)
    truncated_bytes: int = 0

    @property
    def done_ids(self) -> set[str]:
        """Question ids already finished."""
        return {t.question.question_id for t in self.trajectories}

    @property
    def run(self) -> Run | None:
        """The run record of the first line (reused on resume, so every line carries the same one)."""
        return self.trajectories[0].run if self.trajectories else None


def recover_jsonl(path: Path, decode: Callable[..., T], corrupt: type[Exception]) -> tuple[list[T], int]:
    """Records of an append-only JSONL log, truncating a torn tail (a kill mid-write) in place.

    Returns the records and the bytes cut; a bad line before the last raises `corrupt`.
    """
    if not path.exists():
        return [], 0
    records: list[T] = []
    data = path.read_bytes()
    # Bytes after the last newline are a write the kill interrupted.
    good_end = data.rfind(b"\n") + 1
    lines = data[:good_end].split(b"\n")[:-1]
    offset = 0
    for lineno, raw in enumerate(lines, start=1):
        if raw.strip():
            try:
                records.append(decode(raw, path=path, line=lineno))
            except RecordError as exc:
                if lineno < len(lines):
                    raise corrupt(f"{exc} (only a torn last line is repaired automatically)") from None
                good_end = offset  # an unreadable last line is torn as well
        offset += len(raw) + 1
    truncated = len(data) - good_end
    if truncated:
        with open(path, "r+b") as fh:
            fh.truncate(good_end)
            fh.flush()
            os.fsync(fh.fileno())
    return records, truncated


def recover_log(path: Path) -> LogState:
    """Read a run log, repairing a torn tail; a bad line before the last raises LogCorrupt."""
    trajectories, truncated = recover_jsonl(path, decode_trajectory, LogCorrupt)
    return LogState(trajectories=trajectories, truncated_bytes=truncated)


class TrajectoryLog:
    """Appends trajectories; `await append(t)` returns once its line is written and fsync'd.

    Concurrent appends share one write + fsync (group commit), so durability costs one fsync per
    batch rather than per record.
    """

    def __init__(self, path: Path):
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._fh = open(path, "ab")
        self._pending: list[tuple[bytes, asyncio.Future[None]]] = []
        self._writer: asyncio.Task[None] | None = None
        self.written = 0

    async def append(self, trajectory: Trajectory) -> None:
        """Write one trajectory durably."""
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._pending.append((encode(trajectory) + b"\n", future))
        if self._writer is None or self._writer.done():
            self._writer = asyncio.create_task(self._drain())
        await future

    async def _drain(self) -> None:
        while self._pending:
            batch, self._pending = self._pending, []
            try:
                await asyncio.to_thread(self._write, b"".join(line for line, _ in batch))
            except Exception as exc:  # noqa: BLE001 - every waiter must learn the write failed
                for _, future in batch:
                    future.set_exception(exc)
                continue
            self.written += len(batch)
            for _, future in batch:
                future.set_result(None)

    def _write(self, data: bytes) -> None:
        self._fh.write(data)
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def close(self) -> None:
        """Close the file."""
        self._fh.close()
