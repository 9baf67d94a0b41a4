"""execute_run: bounded-concurrency episodes, a durable resumable log, judgments and live ingest."""
from __future__ import annotations

import asyncio
import contextlib
import functools
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from trajscope.engine.llm import (
    ChatModel,
    LocalModelServer,
    ModelConfig,
    ResponseCache,
    default_cache_path,
    resolve_model,
)
from trajscope.format import CAPABILITY_NAMES, Capabilities, Question, RetrieverSettings, Run, Trajectory

from ._context import EpisodeResources
from ._inputs import RunInputs, prepare_inputs
from ._log import TrajectoryLog, recover_log
from ._outcome import error_trajectory, normalise, trajectory_cost, utc_now, with_judgments
from ._progress import RunProgress
from ._selection import select_questions
from ._shard import Shard
from ._spec import RunSpec
from ._warehouse_sink import WarehouseSink


class RunSetupError(RuntimeError):
    """The run could not start (bad spec, nothing to resume, unreadable log)."""


@dataclass
class RunSummary:
    """What one invocation of a run did."""

    run_id: str
    log_path: Path
    n_selected: int
    n_skipped: int
    n_completed: int
    n_errors: int
    cost_usd: float
    elapsed_s: float
    truncated_bytes: int = 0
    repair_note: str | None = None  # a torn last line cut on resume, said in line()
    n_ingested: int = 0
    ingest_error: str | None = None
    model_requests: int = 0
    cache_hits: int = 0

    def line(self) -> str:
        """A one-line human summary."""
        text = (f"{self.run_id}: {self.n_completed} new, {self.n_skipped} resumed, {self.n_errors} errors, "
                f"${self.cost_usd:.4f}, {self.elapsed_s:.1f}s -> {self.log_path}")
        if self.ingest_error:
            text += f" (warehouse: {self.ingest_error})"
        if self.repair_note:
            text += f"\n{self.repair_note}"
        return text


def model_config_for(spec: RunSpec) -> ModelConfig:
    """The ModelConfig a spec asks for."""
    return resolve_model(
        spec.model, base_url=spec.base_url, api_key_env=spec.api_key_env, temperature=spec.temperature,
        max_tokens=spec.max_tokens, reasoning_effort=spec.reasoning_effort, protocol=spec.protocol,
        timeout_s=spec.timeout_s,
    )


@functools.lru_cache(maxsize=1)
def code_version() -> str:
    """Package version plus the git commit of the source tree when there is one."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        text = version("trajscope")
    except PackageNotFoundError:
        text = "unknown"
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        sha = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=Path(__file__).parent,
                             capture_output=True, text=True, timeout=5).stdout.strip()
        if sha:
            text += f"+g{sha}"
    return text


def run_capabilities(controller: Any, questions: list[Question]) -> Capabilities:
    """What an engine run can be measured on: the controller's tools and the selected questions' golds."""
    name = getattr(controller, "name", "controller")
    reads = bool(getattr(controller, "read_action", True))
    searches = bool(getattr(controller, "searches", True))
    n_answers = sum(1 for q in questions if (q.gold_answer or "").strip() or q.aliases)
    n_passages = sum(1 for q in questions if q.gold_chunk_ids)
    n = len(questions)
    return Capabilities(
        search_candidates=searches, snippets=searches, read_action=reads,
        gold_answers=n_answers > 0, gold_passages=n_passages > 0, judgments=n_answers > 0,
        declared=list(CAPABILITY_NAMES),  # the engine knows its own tools and data: nothing is guessed
        reasons={
            "search_candidates": f"the engine's search lists candidate chunk ids ({name})" if searches
            else f"controller {name} does not search",
            "snippets": "the engine's search results carry snippets" if searches
            else f"controller {name} does not search",
            "read_action": f"controller {name} has a read action" if reads
            else f"no read action in this log: controller {name} has none",
            "gold_answers": f"{n_answers} of {n} selected questions have a gold answer",
            "gold_passages": f"{n_passages} of {n} selected questions have gold passages",
            "judgments": "the engine scores em / f1 / contain against the gold answer" if n_answers
            else "no gold answer to score against",
        },
    )


def _run_record(spec: RunSpec, inputs: RunInputs, config: ModelConfig, selected: list[Question]) -> Run:
    retriever = RetrieverSettings(**{k: v for k, v in inputs.retriever_settings.items()
                                     if k in RetrieverSettings.__struct_fields__})
    run = _base_run_record(spec, inputs, config, selected, retriever)
    if not inputs.run_fields:
        return run
    fields = dict(inputs.run_fields)
    fields["config"] = {**run.config, **fields.get("config", {})}
    return msgspec.structs.replace(run, **fields)


def _base_run_record(spec: RunSpec, inputs: RunInputs, config: ModelConfig, selected: list[Question],
                     retriever: RetrieverSettings) -> Run:
    return Run(
        run_id=spec.resolved_run_id(), source="engine", dataset=inputs.dataset_name,
        controller=spec.controller, condition=spec.condition, intervention=spec.condition,
        model=config.name, model_settings=config.settings(), retriever=retriever, seed=spec.seed,
        code_version=code_version(), started_at=utc_now(),
        config={"params": spec.params, "n": spec.n, "dataset_source": spec.dataset,
                "controller_name": getattr(inputs.controller, "name", spec.controller),
                "read_action": bool(getattr(inputs.controller, "read_action", True))},
        capabilities=run_capabilities(inputs.controller, selected),
    )


async def execute_run_async(spec: RunSpec, inputs: RunInputs | None = None, *,
                            model_config: ModelConfig | None = None, shard: Shard | None = None) -> RunSummary:
    """Run (or resume) one RunSpec; every selected question ends up exactly once in the log.

    With a shard, only that shard's questions run, into the shard's own log; the run record (id,
    capabilities) is still the whole run's, so the shards of a run load as one run."""
    if inputs is None:
        inputs = await asyncio.to_thread(prepare_inputs, spec)
    config = model_config or model_config_for(spec)
    if config.local and not config.base_url:
        async with LocalModelServer(model=config.name) as server:
            return await execute_run_async(spec, inputs, model_config=config.with_overrides(base_url=server.base_url),
                                           shard=shard)

    started = time.perf_counter()
    log_path = spec.out_dir / shard.log_name(spec.resolved_run_id()) if shard else spec.log_path()
    if spec.require_resume and not log_path.exists():
        raise RunSetupError(f"nothing to resume: {log_path} does not exist")
    state = recover_log(log_path)
    selected = select_questions(inputs.questions, spec.n, spec.seed, spec.question_ids)
    mine = shard.pick(selected) if shard else selected
    done = state.done_ids
    todo = [q for q in mine if q.question_id not in done]
    run = state.run or _run_record(spec, inputs, config, list(selected))

    cache = ResponseCache(spec.cache_path or default_cache_path()) if spec.cache else None
    model = ChatModel(config, cache=cache)
    ctx = EpisodeResources(model=model, run=run, make_environment=inputs.make_environment,
                           retriever=inputs.retriever, corpus=inputs.corpus, params=dict(spec.params))
    log = TrajectoryLog(log_path)
    sink = WarehouseSink(spec.db_path, log_path, spec.ingest_batch)
    progress = RunProgress(len(mine), initial=len(mine) - len(todo), desc=run.run_id, enabled=spec.progress)
    semaphore = asyncio.Semaphore(spec.concurrency)
    errors = 0

    async def episode(question: Question) -> None:
        nonlocal errors
        async with semaphore:
            trajectory = await log.append(await _run_episode(inputs, question, ctx, spec.episode_timeout_s))
        failed = trajectory.end_reason == "error"
        errors += int(failed)
        progress.advance(trajectory_cost(trajectory), failed)
        await sink.add(1, log.durable_size)

    try:
        # Earlier lines may predate a kill that beat their ingest; re-loading them is idempotent.
        await sink.add(len(state.trajectories), log.durable_size)
        await asyncio.gather(*(episode(q) for q in todo))
        for attempt in range(3):
            await sink.flush(log.durable_size)
            if not sink.pending:
                break
            await asyncio.sleep(1.0 * (attempt + 1))
    finally:
        progress.close()
        log.close()
        await model.close()
        if cache is not None:
            cache.close()

    return RunSummary(
        run_id=run.run_id, log_path=log_path, n_selected=len(mine), n_skipped=len(mine) - len(todo),
        n_completed=len(todo), n_errors=errors, cost_usd=progress.cost_usd,
        elapsed_s=time.perf_counter() - started, truncated_bytes=state.truncated_bytes,
        repair_note=state.repair_note, n_ingested=sink.ingested, ingest_error=sink.last_error,
        model_requests=model.usage.requests, cache_hits=model.usage.cache_hits,
    )


async def _run_episode(
    inputs: RunInputs, question: Question, ctx: EpisodeResources, timeout_s: float | None
) -> Trajectory:
    started_at = utc_now()
    try:
        episode = inputs.controller.run(question, ctx)
        result: Any = await (asyncio.wait_for(episode, timeout_s) if timeout_s else episode)
        trajectory = normalise(result, ctx.run, question, started_at)
    except Exception as exc:  # noqa: BLE001 - a failed episode is a recorded trajectory, never a crashed run
        trajectory = error_trajectory(ctx.run, question, exc, started_at)
    try:
        return with_judgments(trajectory)
    except Exception as exc:  # noqa: BLE001 - a judge bug must not lose the trajectory
        note = {**trajectory.metadata, "judge_error": f"{type(exc).__name__}: {exc}"}
        return msgspec.structs.replace(trajectory, metadata=note)


def execute_run(
    spec: RunSpec, inputs: RunInputs | None = None, *, model_config: ModelConfig | None = None,
    shard: Shard | None = None,
) -> RunSummary:
    """Synchronous wrapper around execute_run_async."""
    return asyncio.run(execute_run_async(spec, inputs, model_config=model_config, shard=shard))
