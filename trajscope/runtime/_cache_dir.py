"""Where this machine keeps what trajscope can rebuild (lake catalogs and mirrors, file digests)."""
from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """$TRAJSCOPE_CACHE (a leading ~ expanded), else ~/.cache/trajscope: lake catalogs, file digests, retrieval."""
    env = os.environ.get("TRAJSCOPE_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "trajscope"


__all__ = ["cache_dir"]
