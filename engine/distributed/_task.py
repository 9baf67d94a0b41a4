"""One (run, shard) task as a Ray worker runs it: the existing orchestrator on the shard, logged to shared storage."""
from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import json
import os
import socket
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from trajscope.engine.runs import RunSpec, Shard, code_version, execute_run, prepare_inputs, utc_now
from trajscope.format import AppendOnlyLog

from ._storage import SharedStorage


class ShardBusy(RuntimeError):
    """Another attempt still holds the shard's log (a worker of a lost node not yet gone); retried."""


class CodeMismatch(RuntimeError):
    """The worker runs another trajscope than the driver: its trajectories would not match a local run."""


@dataclass(frozen=True)
class ShardTask:
    """What a worker needs: the whole run's spec, the shard, where logs go, and the run record's start."""

    spec: RunSpec  # run_id fixed by the driver, no warehouse (the driver ingests), no progress bar
    shard: Shard
    storage: str
    started_at: str  # one value for every shard, so the shards' run records are the same record
    code_version: str
    shard_lock_wait_s: float = 120.0  # the shard log's flock (a lost node's worker may still hold it)

    @property
    def run_id(self) -> str:
        """The run this shard belongs to."""
        return self.spec.resolved_run_id()

    @property
    def log_name(self) -> str:
        """The shard's log file name in the storage."""
        return self.shard.log_name(self.run_id)

    @property
    def attempts_name(self) -> str:
        """The shard's attempt record: one JSON line per attempt (node, host, pid, time)."""
        return self.log_name.removesuffix(".jsonl") + ".attempts"


@dataclass(frozen=True)
class ShardResult:
    """What one finished shard did (the RunSummary of its last attempt, plus where it ran)."""

    run_id: str
    shard: Shard
    log: str
    n_selected: int
    n_skipped: int
    n_completed: int
    n_errors: int
    cost_usd: float
    elapsed_s: float
    attempt: int
    node_id: str | None
    repair_note: str | None = None


def run_shard(task: ShardTask) -> ShardResult:
    """Run (or resume) one shard; every question of the shard ends up exactly once in its log."""
    here = code_version()
    if here != task.code_version:
        raise CodeMismatch(f"worker on {socket.gethostname()} runs trajscope {here}, the driver {task.code_version}: "
                           "install the same version on every node")
    storage = SharedStorage(task.storage)
    with tempfile.TemporaryDirectory(prefix="trajscope-shard-") as tmp:
        scratch = Path(tmp)
        log_path = storage.working_path(task.log_name, scratch)
        attempts_path = storage.working_path(task.attempts_name, scratch)
        with _exclusive(log_path.with_name(task.log_name + ".lock"), task.shard_lock_wait_s):
            attempt = _record_attempt(attempts_path)
            try:
                spec = dataclasses.replace(task.spec, out_dir=log_path.parent)
                inputs = prepare_inputs(spec)
                inputs.run_fields = {**inputs.run_fields, "started_at": task.started_at}
                summary = execute_run(spec, inputs, shard=task.shard)
            finally:  # a failed attempt's lines are kept too: the retry resumes from them
                storage.publish(log_path, task.log_name)
                storage.publish(attempts_path, task.attempts_name)
    return ShardResult(
        run_id=summary.run_id, shard=task.shard, log=storage.url(task.log_name), n_selected=summary.n_selected,
        n_skipped=summary.n_skipped, n_completed=summary.n_completed, n_errors=summary.n_errors,
        cost_usd=summary.cost_usd, elapsed_s=summary.elapsed_s, attempt=attempt, node_id=_node_id(),
        repair_note=summary.repair_note,
    )


@contextlib.contextmanager
def _exclusive(path: Path, wait_s: float) -> Iterator[None]:
    # One writer per shard log: a retry must not append beside a worker of a lost node still running.
    # The OS drops the lock when its holder dies, so a dead node's worker never blocks a retry for good.
    with open(path, "a") as fh:
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise ShardBusy(f"{path}: another attempt still holds this shard after {wait_s:.0f}s") from None
                time.sleep(0.5)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def _record_attempt(path: Path) -> int:
    previous = path.read_bytes().count(b"\n") if path.exists() else 0
    log = AppendOnlyLog(path)
    try:
        log.append(json.dumps({"attempt": previous + 1, "node_id": _node_id(), "host": socket.gethostname(),
                               "pid": os.getpid(), "at": utc_now()}).encode())
    finally:
        log.close()
    return previous + 1


def _node_id() -> str | None:
    ray = sys.modules.get("ray")  # set inside a Ray worker; None when a test calls run_shard directly
    if ray is None or not ray.is_initialized():
        return None
    return ray.get_runtime_context().get_node_id()


def read_attempts(storage: SharedStorage, task: ShardTask) -> list[dict]:
    """The shard's attempt records so far (what the driver reports for retried shards)."""
    with contextlib.suppress(OSError, FileNotFoundError):
        names = storage.names(task.attempts_name)
        if names:
            with storage.readable(task.attempts_name) as path:
                return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return []
