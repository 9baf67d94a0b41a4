"""The driver: Ray tasks per (run, shard), retried when a node dies, progress over all shards, ingest as each ends."""
from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tqdm.auto import tqdm

from engine.runs import RunSpec

from ._plan import plan_matrix
from ._storage import SharedStorage
from ._task import ShardBusy, ShardResult, ShardTask, read_attempts, run_shard


@dataclass
class ShardFailure:
    """A shard whose task failed after its retries; its log keeps what it finished (a rerun resumes it)."""

    task: ShardTask
    error: str


@dataclass
class RayMatrixResult:
    """What a matrix run on Ray did: finished shards, failed shards, and what reached the warehouse."""

    finished: list[ShardResult] = field(default_factory=list)
    failed: list[ShardFailure] = field(default_factory=list)
    ingested: int = 0
    not_ingested: dict[str, str] = field(default_factory=dict)  # shard log -> why its ingest failed
    retried: dict[str, int] = field(default_factory=dict)  # shard log -> attempts, where more than one

    def lines(self) -> list[str]:
        """One line per run (shards summed), then one per retried or failed shard."""
        by_run: dict[str, list[ShardResult]] = {}
        for result in self.finished:
            by_run.setdefault(result.run_id, []).append(result)
        out = []
        for run_id, results in by_run.items():
            count = results[0].shard.count
            out.append(f"{run_id}: {sum(r.n_completed for r in results)} new, {sum(r.n_skipped for r in results)} "
                       f"resumed, {sum(r.n_errors for r in results)} errors, ${sum(r.cost_usd for r in results):.4f}, "
                       f"{len(results)} of {count} shards -> {results[0].log.rsplit('.shard-', 1)[0]}"
                       f".shard-*-of-{count:03d}.jsonl")
        out += [f"{log}: ran {n} attempts (a node was lost; the retry resumed its log)"
                for log, n in sorted(self.retried.items())]
        out += [f"{f.task.log_name}: failed: {f.error}" for f in self.failed]
        out += [f"{log}: not ingested: {why}" for log, why in sorted(self.not_ingested.items())]
        return out


class _LineWatch:
    """Counts the finished lines of shard logs in a directory as they grow (reading only the new bytes)."""

    def __init__(self, tasks: Sequence[ShardTask]):
        self._files = {t.log_name: Path(SharedStorage(t.storage).url(t.log_name))
                       for t in tasks if not SharedStorage(t.storage).remote}
        self._seen: dict[str, tuple[int, int]] = {}  # name -> (offset, lines)

    def lines(self, name: str) -> int:
        path = self._files.get(name)
        if path is None:
            return 0
        offset, lines = self._seen.get(name, (0, 0))
        try:
            with open(path, "rb") as fh:
                if fh.seek(0, 2) < offset:  # a torn tail was cut by a resume: count again
                    offset, lines = 0, 0
                fh.seek(offset)
                data = fh.read()
        except FileNotFoundError:
            return 0
        lines += data.count(b"\n")
        offset += data.rfind(b"\n") + 1
        self._seen[name] = (offset, lines)
        return lines


def run_matrix_on_ray(
    specs: Sequence[RunSpec], *, address: str, shards: int = 4, storage: str | None = None,
    db_path: Path | None = None, max_retries: int = 3, progress: bool = True,
    on_shard: Callable[[ShardResult], None] | None = None,
) -> RayMatrixResult:
    """Run every (run, shard) as a Ray task on the cluster at `address`; ingest each shard's log as it ends."""
    try:
        import ray  # lazy: only `--ray` pays for it
    except ImportError:
        raise ImportError("runs on Ray need Ray: pip install 'trajscope[distributed]'") from None

    plan = plan_matrix(specs, shards=shards, storage=storage)
    result = RayMatrixResult()
    watch = _LineWatch(plan.tasks)
    ray.init(address=address, logging_level=logging.WARNING, log_to_driver=False)
    bar = tqdm(total=plan.total, desc="ray", unit="q", disable=not progress, dynamic_ncols=True, smoothing=0.1)
    try:
        task_fn = ray.remote(num_cpus=1, max_retries=max_retries, retry_exceptions=[ShardBusy])(run_shard)
        pending = {task_fn.remote(task): task for task in plan.tasks}
        counted: dict[str, int] = {}
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1, timeout=1.0)
            for ref in ready:
                task = pending.pop(ref)
                try:
                    shard = ray.get(ref)
                except ray.exceptions.RayError as exc:
                    result.failed.append(ShardFailure(task, _last_line(exc)))
                    continue
                result.finished.append(shard)
                counted[task.log_name] = shard.n_skipped + shard.n_completed
                if shard.attempt > 1:
                    result.retried[shard.log] = shard.attempt
                _ingest(task, shard, db_path, result)
                if on_shard is not None:
                    on_shard(shard)
            for task in pending.values():
                counted[task.log_name] = watch.lines(task.log_name)
            bar.n = sum(counted.values())
            bar.set_postfix_str(f"shards {len(result.finished)}/{len(plan.tasks)} "
                                f"errors={sum(r.n_errors for r in result.finished)} failed={len(result.failed)}",
                                refresh=False)
            bar.refresh()
        for failure in result.failed:  # how often a failed shard was tried, from its attempt record
            where = SharedStorage(failure.task.storage)
            if len(attempts := read_attempts(where, failure.task)) > 1:
                result.retried[where.url(failure.task.log_name)] = len(attempts)
    finally:
        bar.close()
        ray.shutdown()
    return result


def _ingest(task: ShardTask, shard: ShardResult, db_path: Path | None, result: RayMatrixResult) -> None:
    if db_path is None or not shard.n_selected:
        return
    from warehouse import ingest_paths

    storage = SharedStorage(task.storage)
    try:
        with storage.readable(task.log_name) as path:
            report = ingest_paths(db_path, [path], progress=False, source_names=[shard.log])
    except Exception as exc:  # noqa: BLE001 - the log is the record; the rest of the matrix goes on
        result.not_ingested[shard.log] = f"{type(exc).__name__}: {_last_line(exc)}"
        return
    result.ingested += report.records


def _last_line(exc: BaseException) -> str:
    # A RayTaskError's text is the worker's traceback; its last line names the exception.
    text = str(exc).strip()
    return text.splitlines()[-1] if text else type(exc).__name__
