"""Audit records of compile-then-read pipelines: the typed record and its validating JSONL reader."""
from ._codec import (
    DEFAULT_SENTINEL,
    DecodedAuditLine,
    decode_audit_record,
    encode_audit_record,
    iter_audit_records,
    read_audit_records,
    write_audit_record,
)
from ._records import (
    AUDIT_SCHEMA_VERSION,
    INTERVENTION_NAMES,
    RAW_BASELINE,
    SENTINEL_INTERVENTIONS,
    AuditRecord,
    Intervention,
    ModelCall,
    ReaderOutput,
    make_record_id,
)

__all__ = [
    "AUDIT_SCHEMA_VERSION", "DEFAULT_SENTINEL", "INTERVENTION_NAMES", "RAW_BASELINE",
    "SENTINEL_INTERVENTIONS", "AuditRecord", "DecodedAuditLine", "Intervention", "ModelCall",
    "ReaderOutput", "decode_audit_record", "encode_audit_record", "iter_audit_records",
    "make_record_id", "read_audit_records", "write_audit_record",
]
