"""A rubric scan started from the Search page: its command, its detached process and its progress file."""
from __future__ import annotations

import glob
import os
import subprocess
import sys
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

import msgspec

from trajscope.runtime import pid_alive

STAGES = ("starting", "slice", "model", "store", "done", "failed")
# Seconds after its last write that an ended scan's files are swept, when no page removed them.
STALE_SCAN_S = 3600.0


class ScanJob(msgspec.Struct, kw_only=True):
    """Where one scan stands: stage, verdicts done of total, a message (the summary, or why it failed)."""

    job_id: str
    rubric: str
    stage: str = "starting"
    done: int = 0
    total: int = 0
    message: str = ""
    pid: int | None = None
    updated_at: str = ""


def scan_job_path(db_path: Path, job_id: str) -> Path:
    """The progress file of scan job_id on db_path (beside the warehouse, like the demo build's)."""
    db_path = Path(db_path)
    if not job_id.isalnum():
        raise ValueError(f"job id {job_id!r}: letters and digits only")
    return db_path.with_name(f"{db_path.name}.scan-{job_id}.json")


def write_scan_job(path: Path, job: ScanJob) -> None:
    """Replace the progress file in one step (a reader never sees half of it)."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    stamped = msgspec.structs.replace(job, updated_at=datetime.now(UTC).isoformat(timespec="seconds"))
    tmp.write_bytes(msgspec.json.encode(stamped))
    os.replace(tmp, path)


def read_scan_job(path: Path) -> ScanJob | None:
    """The job's progress, or None when there is no readable file."""
    try:
        return msgspec.json.decode(Path(path).read_bytes(), type=ScanJob)
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return None


def scan_running(job: ScanJob | None) -> bool:
    """The scan has neither finished nor failed, and its process is alive (a killed one is not running)."""
    if job is None or job.stage in ("done", "failed"):
        return False
    return job.pid is None or pid_alive(job.pid)


def scan_files(path: Path) -> list[Path]:
    """A scan's files beside the warehouse: its progress file, the progress file's temp copy and its log."""
    path = Path(path)
    return [path, path.with_name(path.name + ".tmp"), path.with_suffix(".log")]


def remove_scan_files(path: Path) -> None:
    """Delete a finished scan's files (the page keeps what it shows of them in its session)."""
    for file in scan_files(path):
        file.unlink(missing_ok=True)


def sweep_stale_scans(db_path: Path, *, older_than_s: float = STALE_SCAN_S) -> list[Path]:
    """Remove the files of scans on db_path that no longer run (finished, failed or killed) and were last
    written more than older_than_s ago: those no page came back for. Returns what was removed."""
    db_path = Path(db_path)
    removed: list[Path] = []
    now = time.time()
    try:
        files = list(db_path.parent.glob(f"{glob.escape(db_path.name)}.scan-*"))
    except OSError:
        return removed
    for file in files:
        progress = file.with_name(file.name.removesuffix(".tmp")).with_suffix(".json")
        try:
            age = now - file.stat().st_mtime
        except OSError:
            continue
        if age <= older_than_s or scan_running(read_scan_job(progress)):
            continue
        file.unlink(missing_ok=True)
        removed.append(file)
    return removed


def scan_command(db_path: Path, rubric: str, runs: list[str], where: str | None, model: str,
                 progress_file: Path | None = None) -> list[str]:
    """The `trajscope scan` argument list (shown on the page, and what the page runs)."""
    command = ["trajscope", "scan", rubric.strip(), *[a for r in runs for a in ("--runs", r)]]
    command += ["--where", where.strip()] if where and where.strip() else []
    command += ["--model", model.strip() or "local", "--db", str(db_path)]
    return command + (["--progress-file", str(progress_file)] if progress_file else [])


def launch_scan(db_path: Path, rubric: str, runs: list[str], where: str | None, model: str) -> Path:
    """Start the scan as a detached child (its output in a log beside the progress file); the progress path."""
    sweep_stale_scans(db_path)
    job_id = uuid.uuid4().hex[:12]
    path = scan_job_path(db_path, job_id)
    write_scan_job(path, ScanJob(job_id=job_id, rubric=rubric.strip()))
    argv = [sys.executable, "-m", *scan_command(db_path, rubric, runs, where, model, path)]
    with open(path.with_suffix(".log"), "wb") as log:
        # A new session: the scan outlives a closed tab, and the page's process never waits for it.
        subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                         start_new_session=True, cwd=Path.cwd())
    return path


__all__ = ["STAGES", "STALE_SCAN_S", "ScanJob", "launch_scan", "read_scan_job", "remove_scan_files", "scan_command",
           "scan_files", "scan_job_path", "scan_running", "sweep_stale_scans", "write_scan_job"]
