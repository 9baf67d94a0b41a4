"""The audit's append-only JSONL log: torn-tail recovery on open, one fsync'd line per finished record."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from engine.runs import recover_jsonl
from trajscope.format import AuditRecord, decode_audit_record, encode_audit_record


class AuditLogCorrupt(RuntimeError):
    """A line other than the last one is not a valid audit record."""


@dataclass
class AuditLogState:
    """What an existing audit log holds."""

    records: list[AuditRecord] = field(default_factory=list)
    truncated_bytes: int = 0

    @property
    def done_ids(self) -> set[str]:
        """Question ids whose latest record is complete (a failed one is redone on resume)."""
        latest: dict[str, AuditRecord] = {}
        for record in self.records:
            latest[record.question_id] = record
        return {qid for qid, record in latest.items() if record.complete}


def recover_audit_log(path: Path) -> AuditLogState:
    """Read a log, truncating a torn last line (a kill mid-write); a bad earlier line raises AuditLogCorrupt."""
    records, truncated = recover_jsonl(path, decode_audit_record, AuditLogCorrupt)
    return AuditLogState(records=records, truncated_bytes=truncated)


class AuditLog:
    """Appends records durably: each line is written, flushed and fsync'd before append returns."""

    def __init__(self, path: Path):
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._fh = open(path, "ab")
        self.written = 0

    def append(self, record: AuditRecord) -> None:
        """Write one record."""
        self._fh.write(encode_audit_record(record) + b"\n")
        self._fh.flush()
        os.fsync(self._fh.fileno())
        self.written += 1

    def close(self) -> None:
        """Close the file."""
        self._fh.close()


__all__ = ["AuditLog", "AuditLogCorrupt", "AuditLogState", "recover_audit_log"]
