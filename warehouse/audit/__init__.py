"""The answer-presence audit's records in the warehouse: loaded through Arrow, idempotent and atomic (their estimates:
trajscope.analysis.audit)."""
from ._loader import AuditLoadReport, load_audit_files, load_audit_records, with_scores

__all__ = ["AuditLoadReport", "load_audit_files", "load_audit_records", "with_scores"]
