"""Running an audit cell: pipelines, interventions and reader calls per question, logged and resumable."""
from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from trajscope.engine.llm import (
    ChatModel,
    LocalModelServer,
    ModelConfig,
    ResponseCache,
    default_cache_path,
    resolve_model,
)
from trajscope.format import BLIND_SUFFIX, RAW_BASELINE, AuditRecord, Chunk, Question, ReaderOutput, token_f1

from ._interventions import (
    gold_is_auditable,
    gold_word_count,
    has_answer,
    insert_mid,
    insert_prepend,
    placebo,
    remove_answer,
)
from ._log import AuditLog, recover_audit_log
from ._pipelines import (
    VERIFY_BASELINES,
    CallResult,
    blind_compile_messages,
    call_model,
    compile_messages,
    raw_context,
    reader_messages,
    verify_messages,
)
from ._sentinels import MASK, SENTINEL_PANEL
from ._spec import AuditSpec

ROLES = ("compiler_a", "compiler_b", "reader")


class AuditDataset(Protocol):
    """What an audit needs of a dataset (ingest.datasets.Dataset satisfies it)."""

    # Properties: the audit reads these and never rebinds them, so a frozen dataset satisfies the protocol.
    @property
    def name(self) -> str: ...
    @property
    def questions(self) -> list[Question]: ...
    @property
    def chunks(self) -> list[Chunk]: ...
    @property
    def contexts(self) -> dict[str, list[str]]: ...


@dataclass
class AuditSummary:
    """What an audit did."""

    audit_id: str
    cell: str
    log_path: Any
    n_selected: int
    n_skipped: int
    n_written: int
    n_excluded: int
    n_failed: int
    model_requests: int
    cache_hits: int
    elapsed_s: float
    truncated_bytes: int = 0
    load_summary: str | None = None

    def line(self) -> str:
        """One human-readable line."""
        text = (
            f"audit {self.audit_id} (cell {self.cell}): {self.n_written} records written, {self.n_skipped} "
            f"already done, {self.n_excluded} excluded (gold < 2 characters), {self.n_failed} failed; "
            f"{self.model_requests} model requests, {self.cache_hits} cache hits, {self.elapsed_s:.1f}s; "
            f"log {self.log_path}"
        )
        if self.truncated_bytes:
            text += f" (repaired a torn last line: {self.truncated_bytes} bytes)"
        if self.load_summary:
            text += f"\nwarehouse: {self.load_summary}"
        return text


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


@dataclass
class _Job:
    baseline: str
    intervention: str
    context: str
    sentinel: str | None = None
    logged_context: str | None = None
    uncached: bool = False


@dataclass
class _Models:
    by_role: dict[str, ChatModel]
    reader_uncached: ChatModel
    limit: asyncio.Semaphore
    names: dict[str, str] = field(default_factory=dict)


class _PassageSource:
    """B1's passages: a question's own paragraphs when the dataset has them (and the spec uses them), else
    the retriever's top k."""

    def __init__(self, dataset: AuditDataset, spec: AuditSpec):
        self._chunks = {c.chunk_id: c for c in dataset.chunks}
        self._contexts = dataset.contexts if spec.b1_source == "contexts" else {}
        self._spec = spec
        self._retriever: Any = None

    def passages(self, question: Question) -> list[Chunk]:
        ids = self._contexts.get(question.question_id)
        if ids:
            return [self._chunks[i] for i in ids if i in self._chunks]
        if self._retriever is None:
            from trajscope.engine.retrieval import build_retriever

            self._retriever = build_retriever(list(self._chunks.values()), kind=self._spec.retriever,  # type: ignore[arg-type]
                                              top_k=self._spec.top_k)
        return [self._chunks[h.chunk_id] for h in self._retriever.search(question.text, self._spec.top_k)]


def _reader_jobs(spec: AuditSpec, gold: str, contexts: Mapping[str, str], edits: list[dict[str, Any]]) -> list[_Job]:
    # A question-blind compile is measured for containment only (AP §14): it is not read.
    jobs = [_Job(baseline, "none", text) for baseline, text in contexts.items() if not baseline.endswith(BLIND_SUFFIX)]
    for baseline in spec.compiled_baselines:
        context = contexts[baseline]
        if has_answer(context, gold):
            sentinels = SENTINEL_PANEL.values() if baseline in spec.sentinel_baselines else [MASK]
            for sentinel in sentinels:
                edit = remove_answer(context, gold, sentinel)
                jobs.append(_Job(baseline, "remove", edit.text, sentinel, edit.text))
                edits.append({"baseline": baseline, "intervention": "remove", "sentinel": sentinel,
                              "spans": [list(s) for s in edit.spans]})
            swapped = placebo(context, gold, MASK, spec.placebo_seed)
            if swapped is None:
                edits.append({"baseline": baseline, "intervention": "placebo", "sentinel": MASK, "spans": [],
                              "skipped": f"no span of {gold_word_count(gold)} word(s) free of the answer"})
            else:
                jobs.append(_Job(baseline, "placebo", swapped.text, MASK, swapped.text))
                edits.append({"baseline": baseline, "intervention": "placebo", "sentinel": MASK,
                              "spans": [list(s) for s in swapped.spans]})
        else:
            for edit in (insert_prepend(context, gold), insert_mid(context, gold)):
                jobs.append(_Job(baseline, edit.intervention, edit.text, logged_context=edit.text))
                edits.append({"baseline": baseline, "intervention": edit.intervention,
                              "spans": [list(s) for s in edit.spans]})
            # The identity check: the same context again, past the cache, so rerun noise shows.
            jobs.append(_Job(baseline, "identity", context, uncached=True))
    return jobs


async def _build_contexts(spec: AuditSpec, models: _Models, question: str, raw: str,
                          calls: list) -> tuple[dict[str, str], str | None]:
    contexts = {RAW_BASELINE: raw}
    decoding = spec.compile_decoding
    b2, b3 = await asyncio.gather(
        call_model(models.by_role["compiler_a"], compile_messages(question, raw), decoding, models.limit),
        call_model(models.by_role["compiler_b"], compile_messages(question, raw), decoding, models.limit),
    )
    calls += [b2.as_call("compile", "b2", models.names["compiler_a"]),
              b3.as_call("compile", "b3", models.names["compiler_b"])]
    for baseline, result in (("b2", b2), ("b3", b3)):
        if result.text is None:
            return contexts, f"compile {baseline} failed: {result.error}"
        contexts[baseline] = result.text
    if spec.question_blind:
        blind = await asyncio.gather(*(
            call_model(models.by_role[role], blind_compile_messages(raw), decoding, models.limit)
            for role in ("compiler_a", "compiler_b")))
        for baseline, role, result in zip(("b2", "b3"), ("compiler_a", "compiler_b"), blind, strict=True):
            calls.append(result.as_call("compile", baseline + BLIND_SUFFIX, models.names[role]))
            if result.text is None:
                return contexts, f"compile {baseline}{BLIND_SUFFIX} failed: {result.error}"
            contexts[baseline + BLIND_SUFFIX] = result.text
    verified: list[tuple[str, CallResult]] = list(zip(
        [VERIFY_BASELINES[m] for m in spec.verify_modes],
        await asyncio.gather(*(
            call_model(models.by_role["compiler_b"], verify_messages(mode, raw, contexts["b2"]), decoding, models.limit)
            for mode in spec.verify_modes
        )), strict=False,
    ))
    for baseline, result in verified:
        calls.append(result.as_call("verify", baseline, models.names["compiler_b"]))
        if result.text is None:
            return contexts, f"verify {baseline} failed: {result.error}"
        contexts[baseline] = result.text
    return contexts, None


async def audit_question(spec: AuditSpec, models: _Models, question: Question, passages: Sequence[Chunk],
                         *, dataset_name: str | None = None) -> AuditRecord:
    """One question through B1-B4 and every applicable intervention, as one audit record."""
    gold = question.gold_answer or ""
    head: dict[str, Any] = {
        "audit_id": spec.resolved_audit_id(), "cell": spec.resolved_cell(),
        "dataset": question.dataset or dataset_name, "question_id": question.question_id,
        "question": question.text, "gold": gold, "aliases": list(question.aliases),
        "reader_model": models.names["reader"], "compiler_a": models.names["compiler_a"],
        "compiler_b": models.names["compiler_b"], "started_at": _now(),
    }
    if not gold_is_auditable(gold):
        return AuditRecord(**head, finished_at=_now(), metadata={"excluded": "gold shorter than 2 characters"})
    calls: list = []
    contexts, error = await _build_contexts(spec, models, question.text, raw_context(passages), calls)
    if error is not None:
        return AuditRecord(**head, contexts=contexts, calls=calls, error=error, finished_at=_now())
    edits: list[dict[str, Any]] = []
    jobs = _reader_jobs(spec, gold, contexts, edits)
    results = await asyncio.gather(*(
        call_model(models.reader_uncached if job.uncached else models.by_role["reader"],
                   reader_messages(job.context, question.text), spec.reader_decoding, models.limit)
        for job in jobs
    ))
    outputs = [
        ReaderOutput(
            baseline=job.baseline, intervention=job.intervention, sentinel=job.sentinel,  # type: ignore[arg-type]
            answer=result.text, context=job.logged_context,
            f1=None if result.text is None else token_f1(result.text, gold, rule=spec.f1_rule), error=result.error,
            tokens_in=result.tokens_in, tokens_out=result.tokens_out, latency_ms=result.latency_ms,
            cost_usd=result.cost_usd, cached=result.cached,
        )
        for job, result in zip(jobs, results, strict=False)
    ]
    return AuditRecord(**head, contexts=contexts, outputs=outputs, calls=calls, finished_at=_now(),
                       metadata={"edits": edits, "n_passages": len(passages), "f1_rule": spec.f1_rule})


LOCAL_TIMEOUT_S = 900.0


def _config_for(spec: AuditSpec, model_spec: str) -> ModelConfig:
    timeout = spec.timeout_s
    if timeout is None and model_spec == "local":
        # The embedded server answers one request at a time on the CPU: a queued 2,048-token compile
        # can wait minutes, and a timeout would only resend it to the back of the same queue.
        timeout = LOCAL_TIMEOUT_S
    return resolve_model(model_spec, base_url=spec.base_url, timeout_s=timeout)


@contextlib.asynccontextmanager
async def _open_models(spec: AuditSpec, configs: Mapping[str, ModelConfig] | None):
    configs = dict(configs or {role: _config_for(spec, getattr(spec, role)) for role in ROLES})
    stack = contextlib.AsyncExitStack()
    async with stack:
        # One embedded server per embedded model that a role names.
        servers: dict[str, LocalModelServer] = {}
        for config in configs.values():
            if config.local and not config.base_url and config.name not in servers:
                servers[config.name] = await stack.enter_async_context(LocalModelServer(model=config.name))
        configs = {r: c.with_overrides(base_url=servers[c.name].base_url) if c.local and not c.base_url else c
                   for r, c in configs.items()}
        cache = ResponseCache(spec.cache_path or default_cache_path()) if spec.cache else None
        if cache is not None:
            stack.callback(cache.close)
        # One client per distinct endpoint, shared by every role that names it.
        clients: dict[tuple[str, str | None], ChatModel] = {}
        for config in configs.values():
            key = (config.name, config.base_url)
            if key not in clients:
                clients[key] = ChatModel(config, cache=cache)
                stack.push_async_callback(clients[key].close)
        reader = configs["reader"]
        uncached = ChatModel(reader, cache=None)
        stack.push_async_callback(uncached.close)
        yield _Models(
            by_role={r: clients[(c.name, c.base_url)] for r, c in configs.items()},
            reader_uncached=uncached,
            limit=asyncio.Semaphore(spec.concurrency),
            names={r: c.name for r, c in configs.items()},
        ), list(clients.values()) + [uncached]


def _load_dataset(spec: AuditSpec) -> AuditDataset:
    from trajscope.ingest.datasets import load_dataset

    return load_dataset(spec.dataset)


async def run_audit_async(spec: AuditSpec, dataset: AuditDataset | None = None, *,
                          model_configs: Mapping[str, ModelConfig] | None = None) -> AuditSummary:
    """Run (or resume) one audit cell; every selected question ends up once, complete, in the log."""
    from trajscope.engine.runs import select_questions

    started = time.perf_counter()
    if dataset is None:
        dataset = await asyncio.to_thread(_load_dataset, spec)
    log_path = spec.log_path()
    state = recover_audit_log(log_path)
    selected = select_questions(dataset.questions, spec.n, spec.seed, spec.question_ids)
    done = state.done_ids
    todo = [q for q in selected if q.question_id not in done]
    source = _PassageSource(dataset, spec)
    log = AuditLog(log_path)
    n_excluded = n_failed = 0
    progress = _progress(len(selected), len(selected) - len(todo), spec)
    try:
        async with _open_models(spec, model_configs) as (models, clients):
            questions_in_flight = asyncio.Semaphore(spec.concurrency)

            async def one(question: Question) -> None:
                nonlocal n_excluded, n_failed
                async with questions_in_flight:
                    passages = await asyncio.to_thread(source.passages, question)
                    record = await audit_question(spec, models, question, passages, dataset_name=dataset.name)
                log.append(record)
                n_excluded += int(not gold_is_auditable(record.gold))
                n_failed += int(not record.complete)
                if progress is not None:
                    progress.update(1)

            await asyncio.gather(*(one(q) for q in todo))
            requests = sum(c.usage.requests for c in clients)
            hits = sum(c.usage.cache_hits for c in clients)
    finally:
        log.close()
        if progress is not None:
            progress.close()
    summary = AuditSummary(
        audit_id=spec.resolved_audit_id(), cell=spec.resolved_cell(), log_path=log_path,
        n_selected=len(selected), n_skipped=len(selected) - len(todo), n_written=len(todo),
        n_excluded=n_excluded, n_failed=n_failed, model_requests=requests, cache_hits=hits,
        elapsed_s=time.perf_counter() - started, truncated_bytes=state.truncated_bytes,
    )
    if spec.db_path is not None:
        from trajscope.warehouse.audit import load_audit_files

        report = await asyncio.to_thread(load_audit_files, spec.db_path, [log_path])
        summary.load_summary = report.summary()
    summary.elapsed_s = time.perf_counter() - started
    return summary


def _progress(total: int, initial: int, spec: AuditSpec) -> Any:
    if not spec.progress:
        return None
    from tqdm import tqdm

    return tqdm(total=total, initial=initial, desc=spec.resolved_audit_id(), unit="q", leave=False)


def run_audit(spec: AuditSpec, dataset: AuditDataset | None = None, *,
              model_configs: Mapping[str, ModelConfig] | None = None) -> AuditSummary:
    """Synchronous run_audit_async."""
    return asyncio.run(run_audit_async(spec, dataset, model_configs=model_configs))


__all__ = ["AuditDataset", "AuditSummary", "audit_question", "run_audit", "run_audit_async"]
