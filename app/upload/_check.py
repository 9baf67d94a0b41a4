"""An uploaded file goes through the same import as `trajscope ingest`: converted once, reported, then loaded.

The upload is saved to a private temp folder, converted by its importer into a canonical log (the one
parse of the source) with the import report and a preview; ingest loads that log, records the upload's
original file name as its source, and deletes the temp folder.
"""
from __future__ import annotations

import functools
import os
import shutil
import stat
import tempfile
import time
import weakref
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from trajscope.analysis.queries import corpus_titles
from trajscope.app.access import write_lock
from trajscope.format import Chunk, RecordError, Trajectory, decode_trajectory
from trajscope.ingest.importers import FileReport, ImportOptions, convert_file, resolve_format
from trajscope.runtime import sweep_dead_process_dirs
from trajscope.warehouse import IngestReport, WarehouseFileError, ingest_paths, validate_log
from trajscope.warehouse.read import ReadRefused

CANONICAL = "canonical"
SideFile = tuple[str, bytes]  # (file name, content) of a mapping, questions or patterns file
# An upload's folder: `upload-<pid of the server>-...` under upload_root(), swept once that server is gone.
_UPLOAD_PREFIX = "upload-"
# An upload left this long without an ingest or a new file is abandoned (the tab left open, or closed
# before its session ended): swept even while its server runs; the page converts the file again if asked.
UPLOAD_MAX_AGE_S = 3600


@dataclass
class PreparedUpload:
    """A converted upload: its format, the import report, a preview, or every error (file, line, field)."""

    name: str
    folder: Path
    format: str | None = None
    report: FileReport | None = None
    canonical: Path | None = None
    errors: list[RecordError] = field(default_factory=list)
    preview: list[Trajectory] = field(default_factory=list)
    per_run_questions: bool = False  # ingest keys every question by its run (runs that disagree on gold)

    @property
    def records(self) -> int:
        return self.report.trajectories if self.report else 0

    @property
    def ok(self) -> bool:
        return self.canonical is not None and not self.errors and self.records > 0

    def error_table(self) -> pl.DataFrame:
        """One row per error: file, line, field, message."""
        return pl.DataFrame(
            {"file": [self.name for _ in self.errors], "line": [e.line for e in self.errors],
             "field": [e.field or "" for e in self.errors], "message": [e.message for e in self.errors]},
            schema={"file": pl.String, "line": pl.Int64, "field": pl.String, "message": pl.String},
        )

    def preview_table(self) -> pl.DataFrame:
        """The first records as they will be ingested."""
        rows = [{
            "trajectory_id": t.trajectory_id, "run_id": t.run.run_id, "condition": t.run.condition,
            "dataset": t.question.dataset or t.run.dataset, "question_id": t.question.question_id,
            "question": t.question.text, "steps": len(t.steps), "final_answer": t.final_answer,
            "gold_answer": t.question.gold_answer, "end_reason": t.end_reason,
            "judgments": ", ".join(f"{j.judge}={j.score:g}" for j in t.judgments),
        } for t in self.preview]
        return pl.DataFrame(rows) if rows else pl.DataFrame()


def prepare_upload(name: str, data: bytes, *, format: str | None = None, run_id: str | None = None,
                   declare: Mapping[str, bool] | None = None, preview_rows: int = 20,
                   mapping: SideFile | None = None, questions: SideFile | None = None,
                   patterns: SideFile | None = None, per_run_questions: bool = False,
                   db_path: str | Path | None = None, dataset: str | None = None) -> PreparedUpload:
    """Save, detect (unless given), convert and report; nothing is written to the warehouse.

    mapping / questions / patterns are the files `trajscope ingest --mapping / --questions /
    --patterns` takes, as (file name, bytes); per_run_questions is kept for the ingest; passages known
    only by title are matched to the corpus of the warehouse at db_path, as `trajscope ingest --db` does;
    dataset keys questions that name no benchmark, as `trajscope ingest --dataset`.
    """
    declare = dict(declare or {})
    sweep_stale_uploads()
    folder = Path(tempfile.mkdtemp(prefix=f"{_UPLOAD_PREFIX}{os.getpid()}-", dir=upload_root()))  # this upload's
    display = Path(name).name or "upload.jsonl"
    prepared = PreparedUpload(name=display, folder=folder, per_run_questions=per_run_questions)
    # The page keeps the upload in its session state: when the browser session ends Streamlit drops it,
    # and the folder goes with it (at the latest when the server stops).
    weakref.finalize(prepared, shutil.rmtree, str(folder), True)
    try:
        _prepare(prepared, data, format=format, run_id=run_id, declare=declare, preview_rows=preview_rows,
                 dataset=dataset, sides={"mapping": mapping, "questions": questions, "patterns": patterns},
                 warehouse_corpus=functools.partial(_warehouse_titles, db_path) if db_path else None)
    except BaseException:
        discard_upload(prepared)  # a failure of any kind (a full disk, a bug) leaves no folder behind
        raise
    if not prepared.ok:
        discard_upload(prepared)  # refused: nothing of it will be ingested, so nothing of it is kept
    return prepared


class UploadRootRefused(ValueError):
    """The upload root is not a folder of this user's own (a link, a file, another user's): never written
    into nor swept, since a sweep through a link would delete folders outside it."""


def upload_root() -> Path:
    """Where uploads are saved while they wait to be ingested ($TRAJSCOPE_UPLOAD_TMP, else the temp dir):
    a real folder owned by this user, made private (0700) when created; UploadRootRefused otherwise."""
    base = Path(os.environ.get("TRAJSCOPE_UPLOAD_TMP") or tempfile.gettempdir())
    root = base / "trajscope-uploads"
    base.mkdir(parents=True, exist_ok=True)
    try:
        root.mkdir(mode=0o700)
    except FileExistsError:
        pass
    info = os.lstat(root)
    if stat.S_ISLNK(info.st_mode):
        raise UploadRootRefused(f"{root}: is a symbolic link (to {os.readlink(root)}); uploads are saved only in a "
                                "real folder, so remove the link or set $TRAJSCOPE_UPLOAD_TMP elsewhere")
    if not stat.S_ISDIR(info.st_mode):
        raise UploadRootRefused(f"{root}: is not a folder; remove it or set $TRAJSCOPE_UPLOAD_TMP elsewhere")
    if info.st_uid != os.getuid():
        raise UploadRootRefused(f"{root}: belongs to another user (uid {info.st_uid}); set $TRAJSCOPE_UPLOAD_TMP "
                                "to a folder of your own")
    return root


def sweep_stale_uploads(max_age_s: float = UPLOAD_MAX_AGE_S) -> list[Path]:
    """Remove upload folders of servers that no longer run (killed before ingest or discard) and those not
    touched for max_age_s (abandoned); what was removed. Only this user's own folders in a real upload root:
    a refused root (a link, another user's) is not swept at all."""
    try:
        root = upload_root()
    except (UploadRootRefused, OSError):
        return []
    removed = sweep_dead_process_dirs(root, _UPLOAD_PREFIX)
    oldest = time.time() - max_age_s
    for folder in root.glob(f"{_UPLOAD_PREFIX}*"):
        try:
            info = os.lstat(folder)
            if stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and info.st_mtime < oldest:
                shutil.rmtree(folder, ignore_errors=True)
                removed.append(folder)
        except OSError:
            continue
    return removed


def _prepare(prepared: PreparedUpload, data: bytes, *, format: str | None, run_id: str | None,
             declare: dict[str, bool], preview_rows: int, dataset: str | None, sides: Mapping[str, SideFile | None],
             warehouse_corpus: Callable[[], Iterable[Chunk]] | None) -> None:
    folder, display = prepared.folder, prepared.name
    path = folder / _saved_name(display)
    path.write_bytes(data)
    saved = {role: _save_side(folder, role, part) for role, part in sides.items() if part is not None}
    try:
        prepared.format = resolve_format(path, format, saved.get("mapping"))
        out = folder / "canonical.jsonl"
        prepared.report = convert_file(path, out, ImportOptions(
            format=prepared.format, run_id=run_id or None, declare=declare, mapping=saved.get("mapping"),
            questions=saved.get("questions"), patterns=saved.get("patterns"),
            declare_source="the Upload page", source_name=display, warehouse_corpus=warehouse_corpus,
            dataset=dataset))
        canonical = prepared.report.output
        assert canonical is not None  # convert_file always names the log to load
        prepared.canonical = canonical
        # The checks ingest makes (an empty id, one id with two records): refused here, not after "valid".
        validate_log(canonical)
    except RecordError as exc:
        prepared.errors.append(_as_shown(exc, display, path, saved))
        return
    # Only the converted log is ingested: the saved upload and its side files go now, halving the disk held.
    if path != canonical:
        path.unlink()
    for side in saved.values():
        shutil.rmtree(side.parent, ignore_errors=True)
    with open(canonical, "rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            if lineno > preview_rows:
                break
            prepared.preview.append(decode_trajectory(raw, path=display, line=lineno))


def _as_shown(exc: RecordError, display: str, path: Path, saved: Mapping[str, Path] | None = None) -> RecordError:
    # An error in a side file names that file, one in the log (or its converted copy) the log's original
    # name, with an archive member's name after it; the saved files' private folder is not the user's business.
    side = next((p.name for p in (saved or {}).values() if str(exc.path) == str(p)), None)
    member = str(exc.path)[len(str(path)):] if str(exc.path).startswith(str(path)) else ""
    return RecordError(side or display + member, exc.line, exc.field, exc.message)


def _saved_name(display: str) -> str:
    # The name on disk: the upload's own when the system takes it (its suffix may tell the format), else a
    # short one with the same suffix (a 300-character name was a page traceback).
    if len(display.encode()) <= 200 and display not in ("canonical.jsonl", "mapping", "questions", "patterns"):
        return display
    suffix = Path(display).suffix
    return "upload" + (suffix if len(suffix.encode()) <= 20 else "")


def _warehouse_titles(db_path: str | Path) -> list[Chunk]:
    """The warehouse's corpus titles; a --db that is no warehouse (text, a directory, a FIFO) is a RecordError
    naming it, shown in the error table like any other, never a traceback."""
    try:
        return corpus_titles(db_path)
    except (ReadRefused, WarehouseFileError) as exc:
        raise RecordError(db_path, 0, None, f"the warehouse to ingest into cannot be read: {exc}") from None


def _save_side(folder: Path, role: str, part: SideFile) -> Path:
    # Each side file gets its own sub-folder, so its name can never replace the log or another one.
    name, data = part
    (folder / role).mkdir()
    path = folder / role / (Path(name).name or role)
    path.write_bytes(data)
    return path


def discard_upload(prepared: PreparedUpload) -> None:
    """Delete the upload's temp folder (the saved file and its canonical log)."""
    shutil.rmtree(prepared.folder, ignore_errors=True)
    prepared.canonical = None


def ingest_upload(db_path: str | Path, prepared: PreparedUpload) -> IngestReport:
    """Load a converted upload (atomic, idempotent), then delete its temp files; refuses one with errors."""
    canonical = prepared.canonical
    if not prepared.ok or canonical is None:  # an upload that validated has its canonical log
        raise ValueError(f"{prepared.name}: not ingested, it did not validate")
    try:
        with write_lock():
            return ingest_paths(db_path, [canonical], progress=False,
                                source_names=[f"upload:{prepared.name}"],
                                per_run_questions=prepared.per_run_questions)
    except RecordError as exc:
        raise _as_shown(exc, prepared.name, prepared.folder / _saved_name(prepared.name)) from None
    finally:
        discard_upload(prepared)
