"""Exporters: canonical trajectories (with their verdicts and labels) written in formats peers read.

The inverse of `ingest.importers`, for OpenInference and OTel GenAI (OTLP JSON spans), ATIF and Inspect.
Each record also rides along as a `trajscope.export` attachment, so that importing the file back gives
the same steps, ids, gold and verdicts; a peer reads the format's own conventions.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from trajscope.format import Exported

from ._atif import ATIF_VERSION, atif_document
from ._inspect import JUDGE_SCORERS, inspect_log
from ._openinference import openinference_request, root_metadata
from ._otel_genai import otel_genai_request


@dataclass(frozen=True)
class ExportFormat:
    """One export format: the importer that reads it back, its file layout, and how a record is written."""

    name: str
    import_format: str  # the `trajscope ingest --format` name that reads the file back
    description: str
    suffix: str
    per_record: Callable[[Exported, str], dict[str, Any]] | None  # JSONL, one document per trajectory


EXPORT_FORMATS: dict[str, ExportFormat] = {f.name: f for f in (
    ExportFormat("openinference", "openinference", "OTLP JSON spans with OpenInference attributes (Phoenix, Arize)",
                 ".jsonl", openinference_request),
    ExportFormat("otel-genai", "otel_genai", "OTLP JSON spans with OpenTelemetry GenAI attributes (Langfuse, ...)",
                 ".jsonl", otel_genai_request),
    ExportFormat("atif", "atif", f"{ATIF_VERSION} agent trajectories, one per line", ".jsonl", atif_document),
    ExportFormat("inspect", "inspect", "an Inspect AI eval log (.json, version 2), one sample per trajectory",
                 ".json", None),
)}


def _dump(value: Any, out: IO[str]) -> None:
    out.write(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


def write_export(records: Iterable[Exported], format: str, out: IO[str], *, version: str) -> int:
    """Write the records in `format` to a text stream; returns how many trajectories were written."""
    spec = EXPORT_FORMATS[format]
    if spec.per_record is None:  # one document for the whole run
        items = list(records)
        _dump(inspect_log(items, version), out)
        out.write("\n")
        return len(items)
    n = 0
    for record in records:
        _dump(spec.per_record(record, version), out)
        out.write("\n")
        n += 1
    return n


def export_file(records: Iterable[Exported], format: str, path: Path, *, version: str) -> int:
    """Write the export to `path` atomically (a failed export leaves no half file)."""
    path = Path(path)
    tmp = path.with_name(path.name + ".part")
    try:
        with open(tmp, "w", encoding="utf-8") as out:
            n = write_export(records, format, out, version=version)
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)
    return n


__all__ = ["EXPORT_FORMATS", "ExportFormat", "JUDGE_SCORERS", "export_file", "root_metadata", "write_export"]
