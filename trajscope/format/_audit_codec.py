"""Reading and writing audit JSONL: strict decoding plus the checks a type cannot express."""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import msgspec

from ._audit_records import RAW_BASELINE, SENTINEL_INTERVENTIONS, AuditRecord
from ._codec import RecordError, decode_strict, encode

DEFAULT_SENTINEL = "[MASK]"

_decoder = msgspec.json.Decoder(AuditRecord)


def _check(record: AuditRecord, path: str | Path, line: int) -> AuditRecord:
    def fail(field: str, message: str) -> RecordError:
        return RecordError(path, line, field, message)

    # An empty or one-character gold is valid: the audit excludes and counts it.
    for name in ("audit_id", "question_id"):
        if not getattr(record, name).strip():
            raise fail(name, "must not be empty")
    for baseline in record.contexts:
        if not baseline.strip():
            raise fail("contexts", "a baseline name must not be empty")
    if record.outputs and record.error is None and RAW_BASELINE not in record.contexts:
        raise fail("contexts", f"needs the raw-retrieval context {RAW_BASELINE!r} (ans_in_b1 is defined on it)")
    outputs = []
    seen: dict[tuple[str, str, str | None], int] = {}
    for i, output in enumerate(record.outputs):
        where = f"outputs[{i}]"
        if output.baseline not in record.contexts:
            raise fail(f"{where}.baseline", f"{output.baseline!r} has no entry in contexts")
        if output.intervention != "none" and output.baseline == RAW_BASELINE:
            raise fail(f"{where}.intervention", "interventions edit compiled contexts, not raw retrieval (b1)")
        if output.intervention in SENTINEL_INTERVENTIONS:
            if output.sentinel is None:
                output = msgspec.structs.replace(output, sentinel=DEFAULT_SENTINEL)
            elif not output.sentinel:
                raise fail(f"{where}.sentinel", "must not be empty")
        elif output.sentinel is not None:
            raise fail(f"{where}.sentinel", f"only remove and placebo take a sentinel, not {output.intervention}")
        if output.f1 is not None and not 0.0 <= output.f1 <= 1.0:
            raise fail(f"{where}.f1", f"token F1 must lie in [0, 1], got {output.f1}")
        key = (output.baseline, output.intervention, output.sentinel)
        if key in seen:
            raise fail(where, f"duplicates outputs[{seen[key]}] (same baseline, intervention and sentinel)")
        seen[key] = i
        outputs.append(output)
    unperturbed = {b for b, intervention, _ in seen if intervention == "none"}
    for (baseline, intervention, _), i in seen.items():
        if intervention != "none" and baseline not in unperturbed:
            raise fail(f"outputs[{i}]", f"no unperturbed ('none') output for baseline {baseline!r} to pair with")
    return msgspec.structs.replace(record, outputs=outputs)


def decode_audit_record(data: bytes | str, *, path: str | Path = "<input>", line: int = 1) -> AuditRecord:
    """Decode and check one JSON audit record; RecordError names the file, line and field."""
    record = decode_strict(_decoder, data, path=path, line=line)
    return _check(record, path, line)


@dataclass(frozen=True)
class DecodedAuditLine:
    """A validated audit record and the line it came from."""

    line: int
    record: AuditRecord


def iter_audit_records(path: str | Path) -> Iterator[DecodedAuditLine]:
    """Stream-validate an audit JSONL file, one line in memory at a time; blank lines are skipped."""
    path = Path(path)
    if not path.is_file():
        raise RecordError(path, 0, None, "file not found")
    with open(path, "rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            if raw.strip():
                yield DecodedAuditLine(lineno, decode_audit_record(raw, path=path, line=lineno))


def read_audit_records(path: str | Path) -> list[AuditRecord]:
    """Every record of an audit file; a later line for the same record id replaces an earlier one."""
    latest: dict[str, AuditRecord] = {}
    for decoded in iter_audit_records(path):
        latest.pop(decoded.record.record_id, None)
        latest[decoded.record.record_id] = decoded.record
    return list(latest.values())


def encode_audit_record(record: AuditRecord) -> bytes:
    """Compact JSON of a record (no trailing newline)."""
    return encode(record)


def write_audit_record(record: AuditRecord, out: IO[bytes]) -> None:
    """Append one record as a JSONL line and flush it, so a crash loses at most the line in flight."""
    out.write(encode(record) + b"\n")
    out.flush()


__all__ = [
    "DEFAULT_SENTINEL", "DecodedAuditLine", "decode_audit_record", "encode_audit_record",
    "iter_audit_records", "read_audit_records", "write_audit_record",
]
