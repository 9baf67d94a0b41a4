"""Feeds the run's log to the warehouse in small batches as it grows, without ever stopping the run."""
from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)


class WarehouseSink:
    """Loads the log's new whole lines off the event loop; a failed load is retried from the same offset.

    What reaches DuckDB is what the log wrote (the bytes on disk), never a re-encoding of the
    in-memory records, so the warehouse and the log cannot disagree.
    """

    def __init__(self, db_path: Path | None, log_path: Path, batch_size: int = 8):
        self.db_path = db_path
        self.log_path = log_path
        self.batch_size = max(1, batch_size)
        self.ingested = 0
        self.last_error: str | None = None
        self._offset = 0  # the log is loaded up to here
        self._next_line = 1
        self._waiting = 0  # records written since the last load
        self._lock = asyncio.Lock()
        self._ingest: Any = _ingest_function() if db_path is not None else None

    @property
    def enabled(self) -> bool:
        """Whether trajectories go anywhere."""
        return self._ingest is not None

    @property
    def pending(self) -> int:
        """Records written to the log but not yet loaded."""
        return self._waiting

    async def add(self, n_records: int, durable_size: int) -> None:
        """Note n records written (the log is whole up to durable_size); load once a batch is full."""
        if not self.enabled:
            return
        self._waiting += n_records
        if self._waiting >= self.batch_size and not self._lock.locked():
            await self.flush(durable_size)

    async def flush(self, durable_size: int | None = None) -> None:
        """Load the log from where the last load ended (one load at a time; failures are retried)."""
        if not self.enabled:
            return
        async with self._lock:
            if not self._waiting and durable_size is not None and durable_size <= self._offset:
                return
            waiting = self._waiting
            try:
                loaded = await asyncio.to_thread(
                    self._ingest, self.db_path, self.log_path,
                    start=self._offset, first_line=self._next_line)
            except Exception as exc:  # noqa: BLE001 - the log is the source of truth; retry next time
                self.last_error = f"{type(exc).__name__}: {exc}"
                log.warning("warehouse ingest failed, will retry: %s", self.last_error)
                return
            self._offset, self._next_line = loaded.next_offset, loaded.next_line
            self.ingested += loaded.report.records
            self._waiting = max(0, self._waiting - waiting)
            self.last_error = None


def _ingest_function() -> Any:
    # Imported on first use so a run without a warehouse never loads DuckDB; tests replace it.
    from trajscope.warehouse import ingest_log_slice

    return ingest_log_slice
