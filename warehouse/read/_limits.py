"""The read path's limits: time, rows, result bytes, memory, temp disk and threads, with their defaults."""
from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace

# Address space a query worker needs besides DuckDB's memory limit: the interpreter, DuckDB, pyarrow
# and their thread stacks (about 1.1 GB of virtual memory, measured) plus the fetched batches.
WORKER_BASE_ADDRESS_SPACE_MB = 1536


@dataclass(frozen=True)
class ReadLimits:
    """Bounds on one read; every field must be a positive number, so no limit can be switched off."""

    timeout_s: float = 30.0  # wall-clock time; a timer calls con.interrupt()
    max_rows: int = 100_000  # rows kept; more are cut off and reported as truncated
    max_result_mb: float = 64.0  # Arrow bytes of the kept rows; passing it refuses the result
    memory_limit_mb: int = 1024  # DuckDB's memory_limit; a query worker's address space is bounded too
    max_temp_mb: int = 1024  # DuckDB's max_temp_directory_size, in a temp directory the read path owns
    threads: int = 2
    lock_wait_s: float = 15.0  # how long an open waits out another process's write lock

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
                    or value <= 0:
                raise ValueError(f"read limit {f.name} must be a positive number, got {value!r}")

    @property
    def max_bytes(self) -> int:
        """The result budget in bytes."""
        return int(self.max_result_mb * 2**20)

    def with_overrides(self, **changes: float | None) -> ReadLimits:
        """A copy with the given limits changed; None keeps the current value (never removes a limit)."""
        return replace(self, **{k: v for k, v in changes.items() if v is not None})

    def duckdb_config(self, temp_directory: str) -> dict[str, object]:
        """The connection settings that carry these limits."""
        return {
            "memory_limit": f"{int(self.memory_limit_mb)}MB",
            "max_temp_directory_size": f"{int(self.max_temp_mb)}MB",
            "temp_directory": temp_directory,
            "threads": int(self.threads),
        }


DEFAULT_LIMITS = ReadLimits()

__all__ = ["DEFAULT_LIMITS", "WORKER_BASE_ADDRESS_SPACE_MB", "ReadLimits"]
