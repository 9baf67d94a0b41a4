"""Rubric search: does each trajectory of a slice match a rubric? match / no_match / unsure, explained and cited."""
from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trajscope.engine.llm import ModelConfig, ResponseCache
from trajscope.warehouse import DEFAULT_LIMITS, ReadLimits
from trajscope.warehouse.verdicts import StoreReport, VerdictRow, rubric_hash, store_verdicts

from ._inputs import read_views, select_slice
from ._render import TrajectoryView, normalise_citation, render_trajectory
from ._session import CallTally, ask_json, model_session, run_all

PROMPT_VERSION = "rubric-v1"
DEFAULT_TOKEN_BUDGET = 2000
RUBRIC_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "verdict": {"type": "string", "enum": ["match", "no_match", "unsure"]},
        "explanation": {"type": "string"},
        "cited_steps": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["verdict", "explanation", "cited_steps"],
}
SYSTEM = ("You audit one trajectory of a question-answering agent against a rubric. Steps are numbered in "
          "square brackets; [GOLD] marks a gold passage (one the question's answer rests on). Judge only from "
          "what is shown. Reply with one JSON object and nothing else.")


def rubric_messages(rubric: str, rendered_text: str) -> list[dict[str, str]]:
    """The chat messages of one rubric question (prompt version PROMPT_VERSION)."""
    user = (f"Rubric: {rubric.strip()}\n\nTrajectory:\n{rendered_text}\n\n"
            "Does this trajectory match the rubric? Answer with JSON: "
            '{"verdict": "match" or "no_match" or "unsure", "explanation": "one or two sentences", '
            '"cited_steps": ["the bracketed numbers of the steps that show it"]}')
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def split_citations(cited: Any, view: TrajectoryView) -> tuple[list[int], list[str], str | None]:
    """(step indices inside the trajectory, citations naming no step of it, error if `cited` is not a list)."""
    if cited is None:
        return [], [], None
    if not isinstance(cited, list):
        return [], [], f"cited_steps is not a list: {cited!r}"[:200]
    labels = view.labels
    inside: list[int] = []
    outside: list[str] = []
    for value in cited:
        label = normalise_citation(value)
        if label in labels:
            if labels[label] not in inside:
                inside.append(labels[label])
        else:
            outside.append(str(value)[:80])
    return inside, outside, None


def parse_rubric_reply(reply: dict[str, Any], view: TrajectoryView) -> dict[str, Any]:
    """The stored fields of a reply: verdict, explanation, cited and rejected steps, or an error verdict."""
    verdict = reply.get("verdict")
    if verdict not in ("match", "no_match", "unsure"):
        return {"verdict": "error", "error": f"reply has no verdict match / no_match / unsure: {reply!r}"[:300]}
    explanation = reply.get("explanation")
    if not isinstance(explanation, str):
        return {"verdict": "error", "error": f"reply's explanation is not text: {reply!r}"[:300]}
    inside, outside, problem = split_citations(reply.get("cited_steps"), view)
    if problem:
        return {"verdict": "error", "error": problem}
    return {"verdict": verdict, "explanation": explanation.strip(), "cited_steps": inside,
            "rejected_citations": outside}


@dataclass
class ScanReport:
    """What a scan asked and stored."""

    sql: str
    rubric_hash: str
    model: str
    n_trajectories: int = 0
    counts: dict[str, int] = field(default_factory=dict)
    rejected_citations: int = 0
    cache_hits: int = 0
    requests: int = 0
    cost_usd: float = 0.0
    stored: StoreReport | None = None
    verdicts: list[VerdictRow] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)  # slice, read, model (rendering included), store

    def summary(self) -> str:
        counts = ", ".join(f"{k} {self.counts.get(k, 0)}" for k in ("match", "no_match", "unsure", "error"))
        stale = f"; {self.stored.stale_skipped} re-ingested meanwhile, not stored" if self.stored and \
            self.stored.stale_skipped else ""
        return (f"rubric {self.rubric_hash} with {self.model}: {self.n_trajectories} trajectories: {counts}; "
                f"{self.rejected_citations} citations outside their trajectory rejected; {self.requests} model "
                f"calls, {self.cache_hits} answered from the cache, cost ${self.cost_usd:.4f}{stale}")


async def rubric_verdicts(model: Any, rubric: str, views: Sequence[TrajectoryView], *, token_budget: int,
                          concurrency: int = 8, progress: bool = False,
                          on_done: Callable[[int, int], None] | None = None) -> list[VerdictRow]:
    """Ask the model about every view; one VerdictRow each (an error verdict when the call or reply failed)."""
    digest = rubric_hash(rubric)
    name = model.config.name

    async def one(view: TrajectoryView) -> VerdictRow:
        rendered = render_trajectory(view, token_budget)
        tally = CallTally()
        reply, error = await ask_json(model, rubric_messages(rubric, rendered.text), RUBRIC_SCHEMA, tally)
        fields_ = parse_rubric_reply(reply, view) if reply is not None else {"verdict": "error", "error": error}
        return VerdictRow(
            scanner="rubric", trajectory_id=view.trajectory_id, record_hash=view.record_hash, model=name,
            prompt_version=PROMPT_VERSION, rubric_hash=digest, token_budget=token_budget,
            truncated=rendered.truncated, n_calls=tally.calls, tokens_in=tally.tokens_in,
            tokens_out=tally.tokens_out, cost_usd=tally.cost_usd, cached=tally.all_cached, **fields_,
        )

    return await run_all(views, one, concurrency=concurrency, desc=f"scan {digest}", progress=progress,
                         on_done=on_done)


def scan(db_path: str | Path | None, rubric: str, runs: Sequence[str], *, config: ModelConfig,
         where: str | None = None, limit: int | None = None, cache: ResponseCache | None = None,
         concurrency: int = 8, token_budget: int = DEFAULT_TOKEN_BUDGET, progress: bool = False,
         limits: ReadLimits = DEFAULT_LIMITS, on_progress: Callable[[str, int, int], None] | None = None
         ) -> ScanReport:
    """`trajscope scan`: the slice through the read path, one verdict per trajectory, stored with the rubric.
    on_progress(stage, done, total) hears each stage (slice, model, store, done) and each verdict."""
    tell = on_progress or (lambda stage, done, total: None)
    if not rubric.strip():
        raise ValueError("RUBRIC: the rubric is empty")
    clock = time.perf_counter()
    seconds: dict[str, float] = {}

    def lap(name: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        seconds[name], clock = now - clock, now

    tell("slice", 0, 0)
    sql, ids = select_slice(db_path, runs, where, limit, limits=limits)
    lap("slice")
    views = read_views(db_path, ids, limits=limits)
    lap("read")
    report = ScanReport(sql=sql, rubric_hash=rubric_hash(rubric), model=config.name, n_trajectories=len(views),
                        seconds=seconds)
    if not views:
        tell("done", 0, 0)
        return report
    tell("model", 0, len(views))

    async def go() -> tuple[list[VerdictRow], Any]:
        async with model_session(config, cache) as model:
            rows = await rubric_verdicts(model, rubric, views, token_budget=token_budget, concurrency=concurrency,
                                         progress=progress, on_done=lambda done, total: tell("model", done, total))
            return rows, model.usage

    rows, usage = asyncio.run(go())
    lap("model")
    report.verdicts = rows
    tell("store", len(rows), len(views))
    report.stored = store_verdicts(db_path, rows, rubric_text=rubric)
    lap("store")
    for row in rows:
        report.counts[row.verdict] = report.counts.get(row.verdict, 0) + 1
        report.rejected_citations += len(row.rejected_citations)
    report.cache_hits, report.requests, report.cost_usd = usage.cache_hits, usage.requests, usage.cost_usd
    tell("done", len(rows), len(views))
    return report


__all__ = ["DEFAULT_TOKEN_BUDGET", "PROMPT_VERSION", "RUBRIC_SCHEMA", "ScanReport", "parse_rubric_reply",
           "rubric_messages", "rubric_verdicts", "scan", "split_citations"]
