"""Shared storage for shard logs: a directory every node mounts, or an fsspec URL (s3://, gs://, file://)."""
from __future__ import annotations

import contextlib
import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any


class SharedStorage:
    """One place all nodes and the driver see. A directory is written in place, line by line (a
    resumed shard loses nothing); a URL is fetched into scratch and published back when the task ends
    (a shard resumes from its last publish)."""

    def __init__(self, location: str | Path):
        text = str(location)
        self.remote = "://" in text
        if self.remote:
            self.location = text.rstrip("/")
        else:  # workers have other working directories: a relative path would mean another place
            self.location = str(Path(text).expanduser().resolve())

    def __repr__(self) -> str:
        return f"SharedStorage({self.location!r})"

    def url(self, name: str) -> str:
        """Where `name` lives, as people and `trajscope ingest` name it."""
        return f"{self.location}/{name}"

    def _fs(self) -> tuple[Any, str]:
        try:
            import fsspec  # only for a URL: a plain directory needs nothing beyond the standard library
        except ImportError:
            raise ImportError(f"{self.location}: storage URLs need fsspec: "
                              "pip install 'trajscope[distributed]'") from None

        fs, root = fsspec.core.url_to_fs(self.location)
        return fs, root.rstrip("/")

    def names(self, pattern: str) -> list[str]:
        """File names in the storage matching a glob pattern, sorted."""
        if not self.remote:
            root = Path(self.location)
            return sorted(p.name for p in root.glob(pattern)) if root.is_dir() else []
        fs, base = self._fs()
        return sorted(Path(p).name for p in fs.glob(f"{base}/{pattern}"))

    def first_line(self, name: str) -> bytes:
        """The first line of a file (b"" when it is empty or missing)."""
        if not self.remote:
            path = Path(self.location) / name
            if not path.exists():
                return b""
            with open(path, "rb") as fh:
                return fh.readline()
        fs, root = self._fs()
        if not fs.exists(f"{root}/{name}"):
            return b""
        with fs.open(f"{root}/{name}", "rb") as fh:
            return fh.readline()

    def working_path(self, name: str, scratch: Path) -> Path:
        """The local file a task appends to: the file itself in a directory, else a fetched copy in scratch."""
        if not self.remote:
            Path(self.location).mkdir(parents=True, exist_ok=True)
            return Path(self.location) / name
        local = scratch / name
        fs, root = self._fs()
        if fs.exists(f"{root}/{name}"):
            fs.get(f"{root}/{name}", str(local))
        return local

    def publish(self, local: Path, name: str) -> None:
        """Make a task's working copy the stored file (nothing to do for a directory)."""
        if self.remote and local.exists():
            fs, root = self._fs()
            fs.makedirs(root, exist_ok=True)
            fs.put(str(local), f"{root}/{name}")

    @contextlib.contextmanager
    def readable(self, name: str) -> Iterator[Path]:
        """A local path to read `name` from (a temporary copy for a URL)."""
        if not self.remote:
            yield Path(self.location) / name
            return
        fs, root = self._fs()
        with tempfile.TemporaryDirectory(prefix="trajscope-shard-read-") as tmp:
            local = Path(tmp) / name
            with fs.open(f"{root}/{name}", "rb") as src, open(local, "wb") as dst:
                shutil.copyfileobj(src, dst)
            yield local


def started_at_of(line: bytes) -> str | None:
    """The run record's started_at on a log's first line, if that line is a whole record."""
    try:
        value = json.loads(line).get("run", {}).get("started_at")
    except (ValueError, AttributeError):
        return None
    return value if isinstance(value, str) else None
