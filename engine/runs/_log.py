"""The run's append-only JSONL log, on the format's log module: torn-tail repair on open, group-committed appends."""
from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path

from trajscope.format import AppendOnlyLog, LogFileCorrupt, Run, Trajectory, decode_trajectory, encode, recover_log_file

from ._outcome import LOG_LINE_BUDGET, oversized_trajectory


class LogCorrupt(LogFileCorrupt):
    """A log line other than the last one is not a valid trajectory."""


@dataclass
class LogState:
    """What an existing log already holds."""

    trajectories: list[Trajectory] = field(default_factory=list)
    truncated_bytes: int = 0
    repair_note: str | None = None  # set when a torn last line was cut

    @property
    def done_ids(self) -> set[str]:
        """Question ids already finished."""
        return {t.question.question_id for t in self.trajectories}

    @property
    def run(self) -> Run | None:
        """The run record of the first line (reused on resume, so every line carries the same one)."""
        return self.trajectories[0].run if self.trajectories else None


def recover_log(path: Path) -> LogState:
    """Read a run log, repairing a torn tail; a bad line before the last raises LogCorrupt."""
    recovered = recover_log_file(path, decode_trajectory, LogCorrupt)
    return LogState(trajectories=recovered.records, truncated_bytes=recovered.truncated_bytes,
                    repair_note=recovered.repair_note())


class TrajectoryLog:
    """Appends trajectories; `await append(t)` returns once its line is written and fsync'd.

    Concurrent appends share one write + fsync (group commit), so durability costs one fsync per
    batch rather than per record; no append returns before its own line is on disk.
    """

    def __init__(self, path: Path):
        self.path = path
        self._log = AppendOnlyLog(path)
        self._pending: list[tuple[bytes, asyncio.Future[None]]] = []
        self._writer: asyncio.Task[None] | None = None

    @property
    def written(self) -> int:
        """Trajectories appended by this writer."""
        return self._log.written

    @property
    def durable_size(self) -> int:
        """Bytes of the file that are whole, fsync'd lines (what a reader such as the warehouse sink may load)."""
        return self._log.durable_size

    async def append(self, trajectory: Trajectory) -> Trajectory:
        """Write one trajectory durably; returns what was written (an error record in place of a trajectory
        whose line would pass the budget ingest can read, see oversized_trajectory)."""
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        line = encode(trajectory)
        if len(line) > LOG_LINE_BUDGET:
            trajectory = oversized_trajectory(trajectory, len(line))
            line = encode(trajectory)
        self._pending.append((line, future))
        if self._writer is None or self._writer.done():
            self._writer = asyncio.create_task(self._drain())
        await future
        return trajectory

    async def _drain(self) -> None:
        while self._pending:
            batch, self._pending = self._pending, []
            try:
                await asyncio.to_thread(self._log.append_many, [line for line, _ in batch])
            except Exception as exc:  # noqa: BLE001 - every waiter must learn the write failed
                for _, future in batch:
                    future.set_exception(exc)
                continue
            for _, future in batch:
                future.set_result(None)

    def close(self) -> None:
        """Close the file."""
        self._log.close()
