"""The one error type of the dataset loaders: says which file, line and field are wrong."""
from __future__ import annotations

from pathlib import Path


class DatasetError(ValueError):
    """A dataset file that cannot be read; the message names file, line and field where known."""

    def __init__(self, path: str | Path, message: str, *, line: int | None = None, field: str | None = None):
        self.path, self.line, self.field, self.message = str(path), line, field, message
        where = self.path if line is None else f"{self.path}:{line}"
        if field:
            where += f": field {field}"
        super().__init__(f"{where}: {message}")
