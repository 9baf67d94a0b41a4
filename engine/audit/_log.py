"""The audit's append-only JSONL log, on the format's log module: one fsync'd line per finished record."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from trajscope.format import (
    AppendOnlyLog,
    AuditRecord,
    LogFileCorrupt,
    decode_audit_record,
    encode_audit_record,
    recover_log_file,
)


class AuditLogCorrupt(LogFileCorrupt):
    """A line other than the last one is not a valid audit record."""


@dataclass
class AuditLogState:
    """What an existing audit log holds."""

    records: list[AuditRecord] = field(default_factory=list)
    truncated_bytes: int = 0
    repair_note: str | None = None  # set when a torn last line was cut

    @property
    def done_ids(self) -> set[str]:
        """Question ids whose latest record is complete (a failed one is redone on resume)."""
        latest: dict[str, AuditRecord] = {}
        for record in self.records:
            latest[record.question_id] = record
        return {qid for qid, record in latest.items() if record.complete}


def recover_audit_log(path: Path) -> AuditLogState:
    """Read a log, truncating a torn last line (a kill mid-write); a bad earlier line raises AuditLogCorrupt."""
    recovered = recover_log_file(path, decode_audit_record, AuditLogCorrupt)
    return AuditLogState(records=recovered.records, truncated_bytes=recovered.truncated_bytes,
                         repair_note=recovered.repair_note())


class AuditLog:
    """Appends records durably: each line is written, flushed and fsync'd before append returns."""

    def __init__(self, path: Path):
        self.path = path
        self._log = AppendOnlyLog(path)

    @property
    def written(self) -> int:
        """Records appended by this writer."""
        return self._log.written

    def append(self, record: AuditRecord) -> None:
        """Write one record."""
        self._log.append(encode_audit_record(record))

    def close(self) -> None:
        """Close the file."""
        self._log.close()


__all__ = ["AuditLog", "AuditLogCorrupt", "AuditLogState", "recover_audit_log"]
