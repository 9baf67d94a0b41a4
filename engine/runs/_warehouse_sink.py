"""Feeds finished trajectories to the warehouse in small batches, without ever stopping the run."""
from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

from trajscope.format import Trajectory

log = logging.getLogger(__name__)


class WarehouseSink:
    """Batches trajectories and ingests them off the event loop; a failed batch is retried later."""

    def __init__(self, db_path: Path | None, batch_size: int = 8):
        self.db_path = db_path
        self.batch_size = max(1, batch_size)
        self.ingested = 0
        self.last_error: str | None = None
        self._pending: list[Trajectory] = []
        self._lock = asyncio.Lock()
        self._ingest = _ingest_function() if db_path is not None else None

    @property
    def enabled(self) -> bool:
        """Whether trajectories go anywhere."""
        return self._ingest is not None

    @property
    def pending(self) -> int:
        """Trajectories queued but not yet ingested."""
        return len(self._pending)

    async def add(self, trajectories: list[Trajectory]) -> None:
        """Queue trajectories; ingest once a batch is full."""
        if not self.enabled:
            return
        self._pending.extend(trajectories)
        if len(self._pending) >= self.batch_size and not self._lock.locked():
            await self.flush()

    async def flush(self) -> None:
        """Ingest everything queued (one ingest at a time; failures stay queued)."""
        if not self.enabled:
            return
        async with self._lock:
            if not self._pending:
                return
            batch, self._pending = self._pending, []
            try:
                await asyncio.to_thread(self._ingest, self.db_path, batch)  # type: ignore[misc]
            except Exception as exc:  # noqa: BLE001 - the log is the source of truth; retry next time
                self._pending = batch + self._pending
                self.last_error = f"{type(exc).__name__}: {exc}"
                log.warning("warehouse ingest failed, will retry: %s", self.last_error)
                return
            self.ingested += len(batch)
            self.last_error = None


def _ingest_function() -> Any:
    # Imported on first use so a run without a warehouse never loads DuckDB; tests replace it.
    from warehouse import ingest_trajectories

    return ingest_trajectories
