"""Where this machine keeps what trajscope can rebuild (lake catalogs and mirrors, file digests)."""
from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """$TRAJSCOPE_CACHE, else ~/.cache/trajscope (the engine's retrieval cache uses the same folder)."""
    return Path(os.environ.get("TRAJSCOPE_CACHE") or Path.home() / ".cache" / "trajscope")


__all__ = ["cache_dir"]
