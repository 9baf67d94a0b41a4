"""The on-disk cache of indexes and embeddings: where it lives and how entries are written safely."""
from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from trajscope.runtime import cache_dir


def default_cache_dir() -> Path:
    """The machine's cache folder (trajscope.runtime.cache_dir), which the lake and the report digests share."""
    return cache_dir()


def slug(text: str) -> str:
    """A file-name-safe rendering of a model name or path."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_")[:80] or "model"


def write_entry(entry: Path, fill: Callable[[Path], None]) -> None:
    """Create a cache entry atomically: fill a temporary sibling folder, then rename it into place.

    A reader therefore sees either no entry or a complete one; an older (e.g. corrupt) entry is
    replaced.
    """
    entry.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{entry.name}.", dir=entry.parent))
    try:
        fill(tmp)
        if entry.exists():
            shutil.rmtree(entry)
        os.replace(tmp, entry)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
