"""Temp folders (and files) named after the process that made them (`<prefix><pid>`, `<prefix><pid>-...` or
`<prefix><pid>.tmp`): the one sweep that removes those a killed process left behind, for the loader's
batches and records logs, the CLI's converted logs, the read path's spills, the Upload page's folders and
output temp files."""
from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

_PID = re.compile(r"(\d+)(?:$|[-.])")


def pid_alive(pid: int) -> bool:
    """Whether a process with this id runs (one of another user counts as running)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep_dead_process_dirs(root: Path, prefix: str, *, files: bool = False) -> list[Path]:
    """Remove the folders under root named prefix + a pid whose process is gone (and such files too, with
    files=True); returns what was removed."""
    removed: list[Path] = []
    try:
        entries = list(Path(root).glob(prefix + "*"))
    except OSError:
        return removed
    for entry in entries:
        match = _PID.match(entry.name[len(prefix):])
        if match is None or int(match.group(1)) == os.getpid() or pid_alive(int(match.group(1))):
            continue
        try:
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry, ignore_errors=True)
            elif files and (entry.is_file() or entry.is_symlink()):
                entry.unlink(missing_ok=True)
            else:
                continue
        except OSError:
            continue
        removed.append(entry)
    return removed


__all__ = ["pid_alive", "sweep_dead_process_dirs"]
