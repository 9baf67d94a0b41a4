"""Fork runs: plan the children of one parent run, then run them through the run orchestrator (log, resume, ingest)."""
from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from trajscope.engine.controllers import get_controller
from trajscope.engine.llm import (
    ChatModel,
    LocalModelServer,
    ModelConfig,
    ResponseCache,
    default_cache_path,
    resolve_model,
)
from trajscope.engine.runs import RunInputs, RunSpec, RunSummary, execute_run_async, prepare_inputs
from trajscope.format import (
    Chunk,
    FinalStep,
    ModelSettings,
    ReadStep,
    RecordError,
    RetrieverSettings,
    SearchStep,
    Trajectory,
    iter_trajectories,
    looks_canonical,
)

from ._auto import AUTO, auto_plan
from ._episode import ForkController, ForkPlan
from ._interventions import ForkError, Intervention, parse_intervention, resolve
from ._rules import WAREHOUSE_RULES, step_for


@dataclass
class ForkSummary:
    """What one fork run did: the orchestrator's summary plus the parents it skipped and why."""

    run_id: str
    parent_run_id: str
    run: RunSummary | None
    planned: int
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (parent trajectory id, reason)
    failed: list[tuple[str, str]] = field(default_factory=list)  # children whose fork could not be made

    def lines(self) -> list[str]:
        """A human summary."""
        out = [f"fork run {self.run_id} (parent run {self.parent_run_id}): {self.planned} children planned, "
               f"{len(self.skipped)} parents skipped"]
        if self.run is not None:
            out.append(self.run.line())
            out.append(f"model requests {self.run.model_requests}, cache hits {self.run.cache_hits}")
        out += [f"  skipped {tid}: {why}" for tid, why in self.skipped[:20]]
        out += [f"  failed {tid}: {why}" for tid, why in self.failed[:20]]
        return out


def load_parent(trajectory_id: str, *, log: str | Path | None = None, db: str | Path | None = None) -> Trajectory:
    """The parent's canonical record: from the given log, else from the log the warehouse loaded it from,
    else rebuilt from the warehouse tables."""
    if log is not None:
        found = load_log(log, ids={trajectory_id})
        if not found:
            raise ForkError(f"{log}: no trajectory {trajectory_id!r}")
        return found[0]
    from trajscope.warehouse import open_read, read_trajectory

    with open_read(db) as con:
        rows = con.execute("SELECT source_file FROM trajectories WHERE trajectory_id = ?", [trajectory_id]).fetchall()
        if not rows:
            raise ForkError(f"no trajectory {trajectory_id!r} in the warehouse")
        source = rows[0][0]
        if source and Path(source).is_file() and looks_canonical(Path(source)):
            try:
                found = load_log(source, ids={trajectory_id})
            except (RecordError, OSError):
                found = []  # the file changed since it was loaded: the warehouse's copy stands
            if found:
                return found[0]
        rebuilt = read_trajectory(con, trajectory_id)
    if rebuilt is None:
        raise ForkError(f"no trajectory {trajectory_id!r} in the warehouse")
    return rebuilt


def load_log(path: str | Path, ids: set[str] | None = None) -> list[Trajectory]:
    """The trajectories of a canonical log (only `ids` when given), last copy of each id."""
    by_id: dict[str, Trajectory] = {}
    for decoded in iter_trajectories(Path(path)):
        t = decoded.trajectory
        if ids is None or t.trajectory_id in ids:
            by_id[t.trajectory_id] = t
    return list(by_id.values())


def parent_model_spec(run: Any) -> str:
    """The `--model` spec that reaches the parent's model: embedded, mock or endpoint."""
    from trajscope.engine.llm._local_server import LOCAL_MODELS

    name = run.model or ""
    if name in LOCAL_MODELS:
        return f"local:{name}"
    if name == "mock" and run.model_settings.base_url:
        return f"mock:{run.model_settings.base_url}"
    if not name:
        raise ForkError(f"run {run.run_id} records no model: pass --model")
    return name


def model_config(run: Any, spec: str | None = None, **overrides: Any) -> ModelConfig:
    """The parent's model with the parent's decoding settings (cache keys then match the parent's calls)."""
    ms = run.model_settings
    spec = spec or parent_model_spec(run)
    base_url = None if spec.startswith(("local", "mock:")) else ms.base_url
    return resolve_model(spec, base_url=base_url, temperature=ms.temperature, max_tokens=ms.max_tokens,
                         reasoning_effort=ms.reasoning_effort, protocol=ms.protocol, **overrides)


def refuse_reason(parent: Trajectory) -> str | None:
    """Why a parent cannot be forked, or None."""
    run = parent.run
    if run.source != "engine":
        return None  # an imported log: imported_reason decides, per fork step, with the corpus loaded
    if not run.controller:
        return "the run records no controller"
    if parent.fork is not None:
        return ("a fork child: its steps after the fork step came from an intervention the replay would not "
                "repeat; fork its parent instead")
    return None


# Controllers whose whole episode is the agent's own tool calls: an imported prefix maps onto them step for step.
IMPORTED_CONTROLLERS = ("read_gate", "arag")


@dataclass(frozen=True)
class ImportedSetup:
    """How the rest of an imported log's fork runs: trajscope's controller over a loaded corpus, and a model."""

    controller: str = "read_gate"
    condition: str | None = None
    dataset: str | None = None  # a dataset name or path (load_dataset) holding the log's chunk ids
    retriever: str = "bm25"


def imported_reason(parent: Trajectory, k: int, corpus: Mapping[str, Chunk]) -> str | None:
    """Why an imported trajectory's prefix cannot be replayed onto trajscope's tools (None: it can).

    Its tool map allows it when every step before k is a search listing chunk ids or a read of chunk ids,
    all in the loaded corpus; step k itself may also be a final."""
    source = parent.run.source
    for i, step in enumerate(parent.steps[:k + 1]):
        kind = type(step).__struct_config__.tag
        if isinstance(step, SearchStep):
            ids = [c.chunk_id for c in step.candidates]
        elif isinstance(step, ReadStep):
            ids = [p.chunk_id for p in step.passages] or list(step.chunk_ids)
        elif i == k and isinstance(step, FinalStep):
            ids = []
        else:
            return (f"imported log (source {source!r}): step {i} is a {kind}"
                    + (f" (tool {step.tool_name!r})" if step.tool_name else "")
                    + ", which has no equivalent in trajscope's search / read tools, so the state before the "
                      "fork step cannot be rebuilt")
        missing = [c for c in ids if c not in corpus]
        if missing:
            return (f"imported log (source {source!r}): step {i} names chunk ids that are not in the loaded corpus "
                    f"({', '.join(missing[:3])}); load the corpus the log's tools searched (--dataset)")
    return None


def fork_run_id(parent_run_id: str, intervention: str, rule: str, where: str | None = None) -> str:
    """Deterministic: the same parent run, intervention, rule and slice always resume the same fork run."""
    blob = json.dumps([parent_run_id, intervention, rule, where or ""])
    digest = hashlib.sha256(blob.encode()).hexdigest()[:8]
    name = intervention.split(":", 1)[0]
    return f"{parent_run_id[:100]}--fork-{name}-at-{rule}-{digest}".replace("/", "_")


def plan_forks(parents: Sequence[Trajectory], rule: str, intervention: Intervention, corpus: Mapping[str, Chunk],
               facts: Mapping[str, Mapping[str, object]] | None = None
               ) -> tuple[dict[str, ForkPlan], list[tuple[str, str]]]:
    """One plan per parent that the rule and the intervention apply to; the others with their reason."""
    plans: dict[str, ForkPlan] = {}
    skipped: list[tuple[str, str]] = []
    for parent in parents:
        reason = refuse_reason(parent)
        if reason is None:
            try:
                own = (facts or {}).get(parent.trajectory_id) or {}
                if intervention.name in AUTO:
                    placebo = intervention.name == "auto_placebo"
                    k, chosen, decisive = auto_plan(parent, own, corpus, placebo=placebo)
                    plan = ForkPlan(parent, k, resolve(chosen, parent, k, corpus), f"{rule}:{decisive}",
                                    placebo=placebo)
                else:
                    found = step_for(rule, parent, own)
                    if found is None:
                        raise ForkError(f"rule {rule!r} finds no such step"
                                        + (" (a warehouse rule: select the parents from the warehouse)"
                                           if rule in WAREHOUSE_RULES and not own else ""))
                    plan = ForkPlan(parent, found, resolve(intervention, parent, found, corpus), rule)
                if parent.run.source != "engine":
                    if plan.intervention.name == "swap_model":
                        raise ForkError("swap_model: an imported log's rest always runs on --model")
                    reason = imported_reason(parent, plan.step_index, corpus)
            except ForkError as exc:
                reason = str(exc)
        if reason is not None:
            skipped.append((parent.trajectory_id, reason))
            continue
        if parent.question.question_id in plans:
            skipped.append((parent.trajectory_id, "a second trajectory of the same question in one parent run"))
            continue
        plans[parent.question.question_id] = plan
    return plans, skipped


def inputs_for(parent_run: Any) -> RunInputs:
    """The parent run's dataset, corpus, retriever and environment, rebuilt from its run record."""
    config = parent_run.config or {}
    dataset = config.get("dataset_source") or parent_run.dataset
    if not dataset:
        raise ForkError(f"run {parent_run.run_id} records no dataset to rebuild its corpus from")
    retriever = parent_run.retriever
    spec = RunSpec(dataset=dataset, controller=parent_run.controller, condition=parent_run.condition,
                   params=dict(config.get("params") or {}), retriever=retriever.kind or "hybrid",
                   top_k=retriever.top_k or 5, embedding_model=retriever.embedding_model)
    return prepare_inputs(spec)


async def execute_forks_async(
    parent_run: Any, plans: Mapping[str, ForkPlan], *, run_id: str, rule: str, intervention: str,
    out_dir: str | Path = "runs", db_path: str | Path | None = None, cache_path: str | Path | None = None,
    model: str | None = None, inputs: RunInputs | None = None, concurrency: int = 4, progress: bool = False,
    where: str | None = None, model_overrides: Mapping[str, Any] | None = None,
) -> RunSummary:
    """Run the planned children as one fork run; a second call with the same arguments resumes it."""
    config_params = dict((parent_run.config or {}).get("params") or {})
    inner = get_controller(parent_run.controller, parent_run.condition, **config_params)
    base = inputs if inputs is not None else await asyncio.to_thread(inputs_for, parent_run)
    config = model_config(parent_run, model, **dict(model_overrides or {}))
    swap_model: ChatModel | None = None
    swap_server: LocalModelServer | None = None
    swap_spec = next((p.intervention.argument for p in plans.values() if p.intervention.name == "swap_model"), None)
    cache_file = Path(cache_path) if cache_path else default_cache_path()
    swap_cache: ResponseCache | None = None
    try:
        if swap_spec:
            swap_config = resolve_model(swap_spec)
            if swap_config.local:
                swap_server = await LocalModelServer(model=swap_config.name).__aenter__()
                swap_config = swap_config.with_overrides(base_url=swap_server.base_url)
            swap_cache = ResponseCache(cache_file)
            swap_model = ChatModel(swap_config, cache=swap_cache)
        controller = ForkController(inner, plans, swap=swap_model)
        questions = [p.parent.question for p in plans.values()]
        fork_inputs = RunInputs(
            dataset_name=parent_run.dataset or base.dataset_name, questions=questions, corpus=base.corpus,
            controller=controller, retriever=base.retriever, make_environment=base.make_environment,
            retriever_settings={k: v for k, v in _retriever_dict(parent_run).items() if v is not None},
            run_fields={
                "intervention": f"fork:{intervention}", "forked_from": parent_run.run_id,
                "dataset": parent_run.dataset, "condition": parent_run.condition,
                "config": {"fork": {"parent_run_id": parent_run.run_id, "rule": rule, "intervention": intervention,
                                    "where": where},
                           "dataset_source": (parent_run.config or {}).get("dataset_source")},
            },
        )
        spec = RunSpec(dataset=parent_run.dataset or "fork", controller=parent_run.controller,
                       condition=parent_run.condition, model=model or parent_model_spec(parent_run),
                       run_id=run_id, out_dir=Path(out_dir), db_path=Path(db_path) if db_path else None,
                       params=config_params, question_ids=list(plans), concurrency=concurrency,
                       cache=True, cache_path=cache_file, progress=progress)
        return await execute_run_async(spec, fork_inputs, model_config=config)
    finally:
        if swap_model is not None:
            await swap_model.close()
        if swap_cache is not None:
            swap_cache.close()
        if swap_server is not None:
            await asyncio.to_thread(swap_server.stop)


def _retriever_dict(run: Any) -> dict[str, Any]:
    r = run.retriever
    return {"kind": r.kind, "top_k": r.top_k, "rrf_k": r.rrf_k, "embedding_model": r.embedding_model,
            "bm25_k1": r.bm25_k1, "bm25_b": r.bm25_b}


def fork_one(trajectory_id: str, at: str, intervention: str, *, log: str | Path | None = None,
             db_path: str | Path | None = None, out_dir: str | Path = "runs", cache_path: str | Path | None = None,
             model: str | None = None, inputs: RunInputs | None = None, parent: Trajectory | None = None,
             ingest: bool = True) -> ForkSummary:
    """`trajscope fork TRAJECTORY_ID --at STEP --intervention I`: one child in its own fork run."""
    parent = parent or load_parent(trajectory_id, log=log, db=db_path)
    return fork_many([parent], at, intervention, db_path=db_path if ingest else None, out_dir=out_dir,
                     cache_path=cache_path, model=model, inputs=inputs, where=f"trajectory_id = {trajectory_id!r}")[0]


def fork_many(parents: Sequence[Trajectory], at: str, intervention: str, *, db_path: str | Path | None = None,
              out_dir: str | Path = "runs", cache_path: str | Path | None = None, model: str | None = None,
              inputs: RunInputs | None = None, where: str | None = None, concurrency: int = 4,
              progress: bool = False, facts: Mapping[str, Mapping[str, object]] | None = None,
              model_overrides: Mapping[str, Any] | None = None,
              imported: ImportedSetup | None = None) -> list[ForkSummary]:
    """Fork every parent at the rule's step with one intervention; one fork run per parent run.
    `imported`: how an imported log's fork runs (trajscope's controller, the corpus); --model is then needed."""
    parsed = parse_intervention(intervention)
    by_run: dict[str, list[Trajectory]] = {}
    for p in parents:
        by_run.setdefault(p.run.run_id, []).append(p)
    summaries = []
    for parent_run_id, group in by_run.items():
        parent_run = group[0].run
        run_id = fork_run_id(parent_run_id, parsed.label(), at, where)
        refused = refuse_reason(group[0])
        if refused is None and parent_run.source != "engine":
            parent_run, refused = _imported_run(parent_run, imported, model)
        if refused is not None:
            summaries.append(ForkSummary(run_id, parent_run_id, None, 0, [(p.trajectory_id, refused) for p in group]))
            continue
        base = inputs or inputs_for(parent_run)
        plans, skipped = plan_forks(group, at, parsed, base.corpus, facts)
        summary = ForkSummary(run_id, parent_run_id, None, len(plans), skipped)
        if plans:
            summary.run = asyncio.run(execute_forks_async(
                parent_run, plans, run_id=run_id, rule=at, intervention=parsed.label(), out_dir=out_dir,
                db_path=db_path, cache_path=cache_path, model=model, inputs=base, concurrency=concurrency,
                progress=progress, where=where, model_overrides=model_overrides))
            for child in load_log(summary.run.log_path):
                if child.error and child.error.startswith("fork failed"):
                    summary.failed.append((child.fork.parent_trajectory_id if child.fork else child.trajectory_id,
                                           child.error))
        summaries.append(summary)
    return summaries


def _imported_run(run: Any, imported: ImportedSetup | None, model: str | None) -> tuple[Any, str | None]:
    """The parent run as the fork replays it: trajscope's controller and corpus in place of the log's agent."""
    if imported is None or not imported.dataset or not model:
        return run, (f"imported log (source {run.source!r}): its agent is not one of trajscope's controllers and "
                     "its model calls are in no cache of ours; fork it with --controller (read_gate or arag), "
                     "--dataset (the corpus its chunk ids come from) and --model (who runs the rest): the prefix "
                     "is then replayed from the log itself")
    if imported.controller not in IMPORTED_CONTROLLERS:
        return run, (f"imported log: controller {imported.controller!r} makes calls of its own that the log does "
                     f"not hold; choose one of {', '.join(IMPORTED_CONTROLLERS)}")
    replay = msgspec.structs.replace(
        run, controller=imported.controller, condition=imported.condition, model=None,
        model_settings=ModelSettings(), retriever=RetrieverSettings(kind=imported.retriever, top_k=5),
        config={**(run.config or {}), "params": {}, "dataset_source": imported.dataset})
    return replay, None


def select_parents(db_path: str | Path | None, runs: Sequence[str], where: str | None = None,
                   rule: str | None = None) -> tuple[list[Trajectory], dict[str, dict[str, object]]]:
    """The parents a batch forks: trajectories of `runs` (trajectory_facts joined with trajectory_correctness,
    so `--where "correct = false"` works) matching the user's predicate, through the sandboxed read path;
    with a warehouse rule, that rule's column for each parent."""
    from trajscope.warehouse import run_read_query

    quoted = ", ".join("'" + r.replace("'", "''") + "'" for r in runs)
    extra_join, extra_cols = "", ""
    if rule in WAREHOUSE_RULES:
        view, columns = WAREHOUSE_RULES[rule]
        picked = ", ".join(f"{column} AS {fact}" for column, fact in columns.items())
        extra_join = f" LEFT JOIN (SELECT trajectory_id, {picked} FROM {view}) r USING (trajectory_id)"
        extra_cols = "".join(f", r.{fact}" for fact in columns.values())
    sql = (f"SELECT s.trajectory_id{extra_cols} FROM (SELECT f.*, c.correct, c.correct_by FROM trajectory_facts f "
           f"LEFT JOIN trajectory_correctness c USING (trajectory_id)) s{extra_join} "
           f"WHERE s.run_id IN ({quoted})" + (f" AND ({where})" if where else "") + " ORDER BY s.trajectory_id")
    # Absolute: the read path's query worker runs in its own folder.
    frame = run_read_query(Path(db_path).resolve() if db_path else None, sql).df
    facts = {row["trajectory_id"]: row for row in frame.to_dicts()}
    parents = [load_parent(tid, db=db_path) for tid in facts]
    return parents, facts
