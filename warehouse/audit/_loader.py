"""Loading audit records into the audit tables through Arrow: idempotent, atomic, F1 filled in."""
from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import msgspec
import pyarrow as pa

from trajscope.format import AuditRecord, encode_audit_record, read_audit_records, token_f1

from .._connection import open_warehouse, transaction
from .._loader import IngestReport

_TABLES = ("audit_records", "audit_contexts", "audit_outputs", "audit_calls")


@dataclass
class AuditLoadReport(IngestReport):
    """What an audit load did: records seen and how many were new, replaced or unchanged."""

    noun: str = "audit records"


def with_scores(record: AuditRecord) -> AuditRecord:
    """The record with every missing output F1 computed as token F1 against the original gold."""
    if all(o.f1 is not None or o.error is not None for o in record.outputs):
        return record
    outputs = [
        o if o.f1 is not None or o.error is not None
        else msgspec.structs.replace(o, f1=token_f1(o.answer or "", record.gold))
        for o in record.outputs
    ]
    return msgspec.structs.replace(record, outputs=outputs)


def _hash(record: AuditRecord) -> str:
    return hashlib.blake2b(encode_audit_record(record), digest_size=16).hexdigest()


def _arrow_tables(items: list[tuple[AuditRecord, str, str | None]]) -> dict[str, pa.Table]:
    heads: dict[str, list] = {k: [] for k in (
        "record_id", "audit_id", "cell", "dataset", "question_id", "question", "gold", "aliases",
        "reader_model", "compiler_a", "compiler_b", "error", "started_at", "finished_at", "metadata",
        "record_hash", "source_file")}
    contexts: dict[str, list] = {"record_id": [], "baseline": [], "text": []}
    output_cols = ("baseline", "intervention", "sentinel", "answer", "context", "f1", "error",
                   "tokens_in", "tokens_out", "latency_ms", "cost_usd", "cached")
    outputs: dict[str, list] = {"record_id": [], "output_index": [], **{k: [] for k in output_cols}}
    call_cols = ("role", "baseline", "model", "tokens_in", "tokens_out", "latency_ms", "cost_usd", "cached", "error")
    calls: dict[str, list] = {"record_id": [], "call_index": [], **{k: [] for k in call_cols}}
    for record, digest, source in items:
        rid = record.record_id
        derived = {"record_id": rid, "cell": record.cell or record.audit_id,
                   "metadata": json.dumps(record.metadata), "record_hash": digest, "source_file": source}
        for name in heads:
            heads[name].append(derived[name] if name in derived else getattr(record, name))
        for baseline, text in record.contexts.items():
            contexts["record_id"].append(rid)
            contexts["baseline"].append(baseline)
            contexts["text"].append(text)
        for i, output in enumerate(record.outputs):
            outputs["record_id"].append(rid)
            outputs["output_index"].append(i)
            for name in output_cols:
                outputs[name].append(getattr(output, name))
        for i, call in enumerate(record.calls):
            calls["record_id"].append(rid)
            calls["call_index"].append(i)
            for name in call_cols:
                calls[name].append(getattr(call, name))
    types = {
        "aliases": pa.list_(pa.string()), "f1": pa.float64(), "tokens_in": pa.int64(),
        "tokens_out": pa.int64(), "latency_ms": pa.float64(), "cost_usd": pa.float64(),
        "cached": pa.bool_(), "output_index": pa.int32(), "call_index": pa.int32(),
    }

    def table(columns: dict[str, list]) -> pa.Table:
        return pa.table({k: pa.array(v, type=types.get(k, pa.string())) for k, v in columns.items()})

    return {"audit_records": table(heads), "audit_contexts": table(contexts),
            "audit_outputs": table(outputs), "audit_calls": table(calls)}


def _upsert(db_path: str | Path | None, items: list[tuple[AuditRecord, str | None]], report: AuditLoadReport) -> None:
    latest: dict[str, tuple[AuditRecord, str | None]] = {}
    for record, source in items:
        latest.pop(record.record_id, None)
        latest[record.record_id] = (with_scores(record), source)
    hashes = {rid: _hash(record) for rid, (record, _) in latest.items()}
    report.records += len(latest)
    with open_warehouse(db_path) as con:
        with transaction(con):
            con.register("incoming_hashes", pa.table({"record_id": list(hashes), "record_hash": list(hashes.values())}))
            changed = con.execute(
                """SELECT i.record_id, a.record_id IS NOT NULL AS existed
                   FROM incoming_hashes i LEFT JOIN audit_records a USING (record_id)
                   WHERE a.record_hash IS DISTINCT FROM i.record_hash"""
            ).fetchall()
            con.unregister("incoming_hashes")
            existed = sorted(rid for rid, was in changed if was)
            if existed:
                con.register("replaced_ids", pa.table({"record_id": existed}))
                for name in _TABLES:
                    con.execute(f"DELETE FROM {name} WHERE record_id IN (SELECT record_id FROM replaced_ids)")
                con.unregister("replaced_ids")
            if changed:
                arrow = _arrow_tables([(latest[rid][0], hashes[rid], latest[rid][1]) for rid, _ in changed])
                for name in _TABLES:
                    con.register("incoming_rows", arrow[name])
                    con.execute(f"INSERT INTO {name} BY NAME SELECT * FROM incoming_rows")
                    con.unregister("incoming_rows")
    report.replaced += len(existed)
    report.new += len(changed) - len(existed)
    report.unchanged += len(latest) - len(changed)


def load_audit_records(
    db_path: str | Path | None, records: Iterable[AuditRecord], *, source_file: str | None = None
) -> AuditLoadReport:
    """Upsert records in one transaction: a changed record is replaced whole, an identical one skipped."""
    start = time.perf_counter()
    report = AuditLoadReport()
    _upsert(db_path, [(r, source_file) for r in records], report)
    report.seconds = time.perf_counter() - start
    return report


def load_audit_files(db_path: str | Path | None, paths: Sequence[str | Path]) -> AuditLoadReport:
    """Validate every file first (a bad line changes nothing), then load them all in one transaction."""
    start = time.perf_counter()
    report = AuditLoadReport(files=[str(p) for p in paths])
    items: list[tuple[AuditRecord, str | None]] = [(record, str(path)) for path in paths
                                                   for record in read_audit_records(path)]
    _upsert(db_path, items, report)
    report.seconds = time.perf_counter() - start
    return report


__all__ = ["AuditLoadReport", "load_audit_files", "load_audit_records", "with_scores"]
