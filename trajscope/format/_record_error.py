"""The error every reader raises for bad input: which file, line and field, and what is wrong."""
from __future__ import annotations

from pathlib import Path


class RecordError(ValueError):
    """A record that is not valid canonical data; says which file, line and field."""

    def __init__(self, path: str | Path, line: int, field: str | None, message: str):
        self.path, self.line, self.field, self.message = str(path), line, field, message
        where = f"{self.path}:{line}"
        if field:
            where += f": field {field}"
        super().__init__(f"{where}: {message}")
