"""Splitting a matrix into (run, shard) tasks: the run ids, seeds and question ids of a local run."""
from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence

from trajscope.engine.runs import RunSpec, Shard, code_version, select_questions, utc_now

from ._storage import SharedStorage, started_at_of
from ._task import ShardTask


class PlanError(ValueError):
    """The shared storage holds logs this plan would not resume (another shard count, a local run)."""


@dataclasses.dataclass(frozen=True)
class Plan:
    """The tasks, and how many questions the matrix holds in all (None when the driver cannot read a dataset)."""

    tasks: list[ShardTask]
    total: int | None


@functools.lru_cache(maxsize=8)
def _dataset_questions(dataset: str) -> tuple:
    from trajscope.ingest.datasets import load_dataset

    return tuple(load_dataset(dataset).questions)


def _selection_size(spec: RunSpec) -> int | None:
    # The driver counts the selection the way the workers make it; a dataset path only the workers see
    # leaves the total unknown (the progress bar then counts without one).
    try:
        return len(select_questions(_dataset_questions(spec.dataset), spec.n, spec.seed, spec.question_ids))
    except (OSError, ValueError):
        return None


def plan_matrix(specs: Sequence[RunSpec], *, shards: int, storage: str | None = None) -> Plan:
    """One task per (run, shard); shard logs go to `storage` (default: each run's out_dir, made absolute)."""
    if shards < 1:
        raise PlanError("shards must be at least 1")
    version = code_version()
    tasks: list[ShardTask] = []
    total: int | None = 0
    for spec in specs:
        run_id = spec.resolved_run_id()
        where = SharedStorage(storage or spec.out_dir)
        size = _selection_size(spec)
        total = None if total is None or size is None else total + size
        count = max(1, min(shards, size)) if size is not None else shards
        existing = where.names(f"{run_id}.shard-*.jsonl")
        other = [name for name in existing if not name.endswith(f"-of-{count:03d}.jsonl")]
        if other:
            raise PlanError(f"{run_id}: {where.url(other[0])} was split into another number of shards than "
                            f"{count}; rerun with that --shards, or move those logs away")
        if where.names(f"{run_id}.jsonl"):
            raise PlanError(f"{run_id}: {where.url(run_id + '.jsonl')} is a single-machine log of this run; "
                            "finish it without --ray, or move it away")
        if spec.require_resume and not existing:
            raise PlanError(f"nothing to resume: no shard log of {run_id} in {where.location}")
        # A resumed run keeps the start its first shards recorded, so every shard's run record is one record.
        started = next((s for s in (started_at_of(where.first_line(n)) for n in existing) if s), None) or utc_now()
        task_spec = dataclasses.replace(spec, run_id=run_id, db_path=None, progress=False, require_resume=False)
        tasks += [ShardTask(spec=task_spec, shard=Shard(i, count), storage=where.location, started_at=started,
                            code_version=version) for i in range(count)]
    return Plan(tasks=tasks, total=total)
