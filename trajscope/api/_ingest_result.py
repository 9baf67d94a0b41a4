"""What `trajscope.ingest(...)` returns: the warehouse's ingest report and the directory files it did not read."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

from trajscope.warehouse import IngestReport


@dataclass
class IngestResult(IngestReport):
    """The ingest report, plus each directory input's documentation and code (README, *.md, *.py, ...) skipped."""

    not_logs: list[Path] = field(default_factory=list)

    @classmethod
    def of(cls, report: IngestReport, not_logs: list[Path]) -> IngestResult:
        """The report as it stands, with the skipped files (their paths under the directory passed) added."""
        kept = {f.name: getattr(report, f.name) for f in dataclasses.fields(report) if f.init}
        return cls(**kept, not_logs=not_logs)


__all__ = ["IngestResult"]
