"""The audit's append-only JSONL log: torn-tail recovery on open, one fsync'd line per finished record."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ingest.audit_records import AuditRecord, decode_audit_record, encode_audit_record
from trajscope.format import RecordError


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
    state = AuditLogState()
    if not path.exists():
        return state
    data = path.read_bytes()
    good_end = data.rfind(b"\n") + 1
    lines = data[:good_end].split(b"\n")[:-1]
    offset = 0
    for lineno, raw in enumerate(lines, start=1):
        if raw.strip():
            try:
                state.records.append(decode_audit_record(raw, path=path, line=lineno))
            except RecordError as exc:
                if lineno < len(lines):
                    raise AuditLogCorrupt(f"{exc} (only a torn last line is repaired automatically)") from None
                good_end = offset
        offset += len(raw) + 1
    if good_end < len(data):
        state.truncated_bytes = len(data) - good_end
        with open(path, "r+b") as fh:
            fh.truncate(good_end)
            fh.flush()
            os.fsync(fh.fileno())
    return state


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
