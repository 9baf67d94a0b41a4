"""An uploaded file is saved, its format detected, every record validated and previewed; ingest is last."""
from __future__ import annotations

import hashlib
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from app.access import write_lock
from ingest.importers import FORMATS, detect_format, import_file
from trajscope.format import RecordError, Trajectory, decode_trajectory, looks_canonical
from warehouse import IngestReport, ingest_paths, ingest_trajectories

CANONICAL = "canonical"
_UPLOAD_DIR = Path(tempfile.gettempdir()) / "trajscope-uploads"


def save_upload(name: str, data: bytes) -> Path:
    """Write the upload under a content-addressed temp folder, keeping its file name for messages."""
    digest = hashlib.sha256(data).hexdigest()[:16]
    folder = _UPLOAD_DIR / digest
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / (Path(name).name or "upload.jsonl")
    if not path.exists() or path.stat().st_size != len(data):
        path.write_bytes(data)
    return path


@dataclass
class UploadCheck:
    """What the validation found: the format, the records read, and every error (file, line, field)."""

    path: Path
    format: str | None
    records: int = 0
    errors: list[RecordError] = field(default_factory=list)
    preview: list[Trajectory] = field(default_factory=list)
    stopped_early: bool = False

    @property
    def ok(self) -> bool:
        return self.format is not None and not self.errors and self.records > 0

    def error_table(self) -> pl.DataFrame:
        """One row per error: file, line, field, message."""
        return pl.DataFrame(
            {"file": [Path(e.path).name for e in self.errors], "line": [e.line for e in self.errors],
             "field": [e.field or "" for e in self.errors], "message": [e.message for e in self.errors]},
            schema={"file": pl.String, "line": pl.Int64, "field": pl.String, "message": pl.String},
        )

    def preview_table(self) -> pl.DataFrame:
        """The first records as they would be ingested."""
        rows = [{
            "trajectory_id": t.trajectory_id, "run_id": t.run.run_id, "condition": t.run.condition,
            "dataset": t.question.dataset or t.run.dataset, "question_id": t.question.question_id,
            "question": t.question.text, "steps": len(t.steps), "final_answer": t.final_answer,
            "gold_answer": t.question.gold_answer, "end_reason": t.end_reason,
            "judgments": ", ".join(f"{j.judge}={j.score:g}" for j in t.judgments),
        } for t in self.preview]
        return pl.DataFrame(rows) if rows else pl.DataFrame()


def _canonical_records(path: Path, check: UploadCheck, max_errors: int) -> Iterator[Trajectory]:
    with open(path, "rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            try:
                yield decode_trajectory(raw, path=path.name, line=lineno)
            except RecordError as exc:
                check.errors.append(exc)
                if len(check.errors) >= max_errors:
                    check.stopped_early = True
                    return


def detect_upload_format(path: Path) -> str | None:
    """`canonical`, an importer name, or None when the format is not recognised."""
    if looks_canonical(path):
        return CANONICAL
    try:
        return detect_format(path)
    except (OSError, ValueError):
        return None


def check_upload(path: Path, *, format: str | None = None, run_id: str | None = None,
                 max_errors: int = 50, preview_rows: int = 20) -> UploadCheck:
    """Detect (unless given) and validate every record; nothing is written."""
    fmt = format or detect_upload_format(path)
    check = UploadCheck(path=path, format=fmt)
    if fmt is None:
        check.errors.append(RecordError(path.name, 1, None, "unrecognised log format: not canonical "
                                        f"trajscope JSONL nor one of {', '.join(FORMATS)}"))
        return check
    if fmt == CANONICAL:
        records = _canonical_records(path, check, max_errors)
    else:
        records = import_file(path, format=fmt, run_id=run_id or None)
    try:
        for trajectory in records:
            check.records += 1
            if len(check.preview) < preview_rows:
                check.preview.append(trajectory)
    except RecordError as exc:
        # Importers stream and stop at their first bad record.
        check.errors.append(RecordError(Path(exc.path).name, exc.line, exc.field, exc.message))
        check.stopped_early = True
    return check


def ingest_upload(db_path: str | Path, check: UploadCheck, *, run_id: str | None = None) -> IngestReport:
    """Write a checked upload (atomic, idempotent); refuses one that did not validate."""
    if not check.ok:
        raise ValueError(f"{check.path.name}: not ingested, it did not validate")
    with write_lock():
        if check.format == CANONICAL:
            return ingest_paths(db_path, [check.path], progress=False)
        return ingest_trajectories(db_path, import_file(check.path, format=check.format, run_id=run_id or None))
