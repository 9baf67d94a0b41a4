"""The read path's limits: time, rows, result bytes, memory, temp disk, threads and the lock wait, and
the one table of their defaults for each kind of reader."""
from __future__ import annotations

import math
import os
import resource
from dataclasses import dataclass, fields, replace
from typing import Any

from ._errors import ReadRefused

# Address space a query worker needs besides DuckDB's memory limit: the interpreter, DuckDB, pyarrow
# and their thread stacks (about 1.1 GB of virtual memory, measured) plus the fetched batches.
WORKER_BASE_ADDRESS_SPACE_MB = 1536

# The one table of read-limit defaults. Columns: a command (CLI, scanners, report), SQL a user types in
# the app (console, Export filter), and a page's own queries. Everything else (ReadLimits(), the app's
# settings and their $TRAJSCOPE_APP_* fallbacks, the CLI flags' defaults) reads its numbers from here.
PROFILES = ("command", "console", "page")
DEFAULTS: dict[str, tuple[float, float, float]] = {
    #                  command   console    page
    "timeout_s":       (30.0,    10.0,      30.0),       # wall-clock seconds; a timer calls con.interrupt()
    "max_rows":        (100_000, 10_000,    1_000_000),  # rows a result may hold
    "max_result_mb":   (64.0,    64.0,      256.0),      # Arrow bytes of those rows
    "memory_limit_mb": (1024,    1024,      1024),       # DuckDB's memory_limit (a worker's address space too)
    "max_temp_mb":     (1024,    1024,      1024),       # DuckDB's max_temp_directory_size, in a dir we own
    "threads":         (2,       2,         2),          # DuckDB threads
    "lock_wait_s":     (15.0,    15.0,      15.0),       # how long an open waits out another's write lock
}


def _default(name: str, profile: str = "command") -> Any:  # an int for counts and MB, a float for seconds
    return DEFAULTS[name][PROFILES.index(profile)]


@dataclass(frozen=True)
class ReadLimits:
    """Bounds on one read; every field must be a positive number, so no limit can be switched off."""

    timeout_s: float = _default("timeout_s")
    max_rows: int = _default("max_rows")
    max_result_mb: float = _default("max_result_mb")
    memory_limit_mb: int = _default("memory_limit_mb")
    max_temp_mb: int = _default("max_temp_mb")
    threads: int = _default("threads")
    lock_wait_s: float = _default("lock_wait_s")

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
        kept: dict[str, Any] = {k: v for k, v in changes.items() if v is not None}
        return replace(self, **kept)

    def duckdb_config(self, temp_directory: str) -> dict[str, object]:
        """The connection settings that carry these limits."""
        return {
            "memory_limit": f"{int(self.memory_limit_mb)}MB",
            "max_temp_directory_size": f"{int(self.max_temp_mb)}MB",
            "temp_directory": temp_directory,
            "threads": int(self.threads),
        }


def mb_text(value: float) -> str:
    """A figure in MB as a message shows it: thousands separated, no exponent (1,000,000, 0.5)."""
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.2f}".rstrip("0").rstrip(".")


class LimitAboveMachine(ReadRefused):
    """Limits whose worker bound is more memory than the machine has: such a bound would bound nothing."""


def worker_address_space_mb(limits: ReadLimits) -> float:
    """The address space a query worker asks for: the interpreter, DuckDB's memory limit, twice the result."""
    return WORKER_BASE_ADDRESS_SPACE_MB + limits.memory_limit_mb + 2 * limits.max_result_mb


def inherited_address_space_mb() -> float | None:
    """The address-space limit this process runs under (ulimit -v; a worker inherits it), None when unlimited."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    known = [v for v in (soft, hard) if v != resource.RLIM_INFINITY]
    return min(known) / 2**20 if known else None


def machine_memory_mb() -> float | None:
    """Physical memory of this machine in MB, None where the system does not say."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**20
    except (ValueError, OSError, AttributeError):
        return None


def check_fits_machine(limits: ReadLimits) -> None:
    """Refuse limits whose memory (DuckDB's limit and twice the result, held by the worker and again by the
    caller) passes the machine's: raising a flag that far would remove the bound in all but name (a
    1,000,000 MB result budget made a worker's address-space cap 2 TB)."""
    machine = machine_memory_mb()
    asked = limits.memory_limit_mb + 2 * limits.max_result_mb
    if machine is not None and asked > machine:
        room = max(0.0, (machine - limits.memory_limit_mb) / 2)
        raise LimitAboveMachine(
            f"refused: the memory limit of {limits.memory_limit_mb:,} MB plus twice the result limit of "
            f"{mb_text(limits.max_result_mb)} MB is {asked:,.0f} MB, more than this machine's {machine:,.0f} MB of "
            f"memory, so it would bound nothing; lower --max-result-mb (at most {room:,.0f} MB here) or "
            "--memory-limit-mb")


def profile_limits(profile: str) -> ReadLimits:
    """The defaults of one column of DEFAULTS (command, console or page)."""
    if profile not in PROFILES:
        raise ValueError(f"unknown read-limit profile {profile!r}; one of {', '.join(PROFILES)}")
    return ReadLimits(**{name: _default(name, profile) for name in DEFAULTS})


DEFAULT_LIMITS = profile_limits("command")
CONSOLE_LIMITS = profile_limits("console")
PAGE_LIMITS = profile_limits("page")

__all__ = ["CONSOLE_LIMITS", "DEFAULTS", "DEFAULT_LIMITS", "PAGE_LIMITS", "PROFILES", "WORKER_BASE_ADDRESS_SPACE_MB",
           "LimitAboveMachine", "ReadLimits", "check_fits_machine", "inherited_address_space_mb", "machine_memory_mb",
           "mb_text", "profile_limits", "worker_address_space_mb"]
