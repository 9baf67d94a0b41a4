"""The driver: Ray tasks per (run, shard), retried when a node dies, progress over all shards, ingest as each ends
(into a warehouse file), or as each run's last shard ends (into a lake, which adds runs whole)."""
from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tqdm.auto import tqdm

from trajscope.engine.runs import RunSpec

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
    not_ingested: dict[str, str] = field(default_factory=dict)  # shard log (a lake: run id) -> why its ingest failed
    in_lake: dict[str, str] = field(default_factory=dict)  # run id -> the lake writer that added it, or that it held it
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
        out += [f"{run_id}: {what}" for run_id, what in sorted(self.in_lake.items())]
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
    on_shard: Callable[[ShardResult], None] | None = None, lake: str | Path | None = None,
) -> RayMatrixResult:
    """Run every (run, shard) as a Ray task on the cluster at `address`; ingest each shard's log into db_path as it
    ends, or with `lake` each run's shard logs together once its last shard has ended (a lake adds runs whole)."""
    try:
        import ray  # lazy: only `--ray` pays for it
    except ImportError:
        raise ImportError("runs on Ray need Ray: pip install 'trajscope[distributed]'") from None

    plan = plan_matrix(specs, shards=shards, storage=storage)
    result = RayMatrixResult()
    lake_runs = _LakeRuns(lake, plan.tasks, result) if lake is not None else None
    watch = _LineWatch(plan.tasks)
    ray.init(address=address, logging_level=logging.WARNING, log_to_driver=False)
    bar = tqdm(total=plan.total, desc="ray", unit="q", disable=not progress, dynamic_ncols=True, smoothing=0.1)
    try:
        # Ray's stub types retry_exceptions as a bool; Ray also takes the exception classes to retry on.
        task_fn = ray.remote(  # type: ignore[call-overload]
            num_cpus=1, max_retries=max_retries, retry_exceptions=[ShardBusy])(run_shard)
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
                    if lake_runs is not None:
                        lake_runs.shard_failed(task)
                    continue
                result.finished.append(shard)
                counted[task.log_name] = shard.n_skipped + shard.n_completed
                if shard.attempt > 1:
                    result.retried[shard.log] = shard.attempt
                if lake_runs is not None:
                    lake_runs.shard_ended(task, shard)
                else:
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
    from trajscope.warehouse import ingest_paths

    storage = SharedStorage(task.storage)
    try:
        with storage.readable(task.log_name) as path:
            report = ingest_paths(db_path, [path], progress=False, source_names=[shard.log])
    except Exception as exc:  # noqa: BLE001 - the log is the record; the rest of the matrix goes on
        result.not_ingested[shard.log] = f"{type(exc).__name__}: {_last_line(exc)}"
        return
    result.ingested += report.records


class _LakeRuns:
    """Adds each run to a lake as one writer once all of its shards have ended; a run with a failed shard waits for
    a rerun, and one the lake already holds is left as it is (a lake never replaces a run)."""

    def __init__(self, lake: str | Path, tasks: Sequence[ShardTask], result: RayMatrixResult):
        from trajscope.warehouse.lake import readable_lake

        self.lake, self.result = lake, result
        self.waiting: dict[str, list[ShardTask]] = {}
        for task in tasks:
            self.waiting.setdefault(task.run_id, []).append(task)
        self.ended: dict[str, list[tuple[ShardTask, ShardResult]]] = {run_id: [] for run_id in self.waiting}
        self.held = set()  # the runs the lake holds now: a rerun of a finished matrix adds nothing twice
        for marker in sorted((readable_lake(lake) / "_committed").glob("[!.]*")):
            with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
                self.held |= {str(r) for r in json.loads(marker.read_text())["runs"]}

    def shard_failed(self, task: ShardTask) -> None:
        self.result.not_ingested[task.run_id] = "a shard failed, so the run waits (a rerun resumes it, then adds it)"

    def shard_ended(self, task: ShardTask, shard: ShardResult) -> None:
        ended = self.ended[task.run_id]
        ended.append((task, shard))
        if len(ended) < len(self.waiting[task.run_id]) or task.run_id in self.result.not_ingested:
            return
        if task.run_id in self.held:
            self.result.in_lake[task.run_id] = "already in the lake (a lake adds runs and never replaces one)"
            return
        from trajscope.warehouse.lake import ingest_into_lake

        with contextlib.ExitStack() as stack:
            ordered = sorted((e for e in ended if e[1].n_selected), key=lambda e: e[0].log_name)
            if not ordered:  # more shards than questions: nothing to add
                return
            paths = [stack.enter_context(SharedStorage(t.storage).readable(t.log_name)) for t, _ in ordered]
            try:
                written = ingest_into_lake(self.lake, paths, progress=False, source_names=[s.log for _, s in ordered])
            except Exception as exc:  # noqa: BLE001 - the logs are the record; the rest of the matrix goes on
                self.result.not_ingested[task.run_id] = f"{type(exc).__name__}: {_last_line(exc)}"
                return
        self.result.ingested += written.ingest.records if written.ingest else 0
        self.result.in_lake[task.run_id] = f"added to {self.lake} as writer {written.writer}"


def _last_line(exc: BaseException) -> str:
    # A RayTaskError's text is the worker's traceback; its last line names the exception.
    text = str(exc).strip()
    return text.splitlines()[-1] if text else type(exc).__name__
