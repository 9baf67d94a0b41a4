"""This process's own peak resident memory, which neither its parent nor its earlier work inflates."""
from __future__ import annotations

import resource
from pathlib import Path

_STATUS = Path("/proc/self/status")


def _status_kb(field: str) -> int | None:
    try:
        for line in _STATUS.read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def peak_rss_mb() -> float:
    """Peak resident MB of this process image (Linux VmHWM).

    Not ru_maxrss: Linux carries the parent's peak into a child across vfork + exec (Python's
    subprocess), so a child of a 1 GB test process reported 1.1 GB while using 0.3 GB.
    """
    kb = _status_kb("VmHWM")
    return (kb if kb is not None else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) / 1024


def reset_peak_rss() -> float:
    """Reset the peak to the present resident size (Linux clear_refs) and return it in MB; a growth is
    then peak_rss_mb() minus this, even where the process peaked higher before."""
    Path("/proc/self/clear_refs").write_text("5")
    return peak_rss_mb()


__all__ = ["peak_rss_mb", "reset_peak_rss"]
