"""Temp folders named after the process that made them (`<prefix><pid>` or `<prefix><pid>-...`): the one
sweep that removes those a killed process left behind, for the loader's batches and the read path's spills."""
from __future__ import annotations

import os
import shutil
from pathlib import Path


def pid_alive(pid: int) -> bool:
    """Whether a process with this id runs (one of another user counts as running)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep_dead_process_dirs(root: Path, prefix: str) -> list[Path]:
    """Remove the folders under root named prefix + a pid whose process is gone; returns what was removed."""
    removed: list[Path] = []
    try:
        entries = list(root.glob(prefix + "*"))
    except OSError:
        return removed
    for entry in entries:
        pid_text = entry.name[len(prefix):].split("-", 1)[0]
        if not entry.is_dir() or not pid_text.isdigit():
            continue
        if int(pid_text) != os.getpid() and not pid_alive(int(pid_text)):
            shutil.rmtree(entry, ignore_errors=True)
            removed.append(entry)
    return removed


__all__ = ["pid_alive", "sweep_dead_process_dirs"]
