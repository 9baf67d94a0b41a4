"""Temp directories the read path owns: one per process for its own connections, one per worker query;
removed when done, and swept at the next start when a killed process left one behind."""
from __future__ import annotations

import os
import shutil
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from trajscope.runtime import sweep_dead_process_dirs

PREFIX = "trajscope-read-"
_lock = threading.Lock()
_users = 0


def _root() -> Path:
    return Path(os.environ.get("TRAJSCOPE_READ_TMP") or tempfile.gettempdir())


def sweep_stale() -> list[Path]:
    """Remove temp directories of processes that no longer run; returns what was removed."""
    return sweep_dead_process_dirs(_root(), PREFIX)


def process_dir() -> Path:
    """This process's shared spill directory (one path, so concurrent connections share one DuckDB config)."""
    return _root() / f"{PREFIX}{os.getpid()}"


@contextmanager
def shared_temp_dir() -> Iterator[Path]:
    """The process directory, created on first use and removed when its last user leaves."""
    global _users
    with _lock:
        if _users == 0:
            sweep_stale()
        path = process_dir()
        path.mkdir(parents=True, exist_ok=True)
        _users += 1
    try:
        yield path
    finally:
        with _lock:
            _users -= 1
            if _users == 0:
                shutil.rmtree(path, ignore_errors=True)


@contextmanager
def private_temp_dir() -> Iterator[Path]:
    """A fresh directory for one worker query, removed afterwards whatever happened to the worker."""
    sweep_stale()
    path = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=_root()))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


__all__ = ["PREFIX", "private_temp_dir", "process_dir", "shared_temp_dir", "sweep_stale"]
