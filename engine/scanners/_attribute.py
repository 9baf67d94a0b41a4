"""Step attribution by a model: the three protocols of Who&When (Zhang et al., ICML 2025, "Which Agent Causes
Task Failures and When?") and a hybrid one that also shows the rules' evidence funnel and candidate step.

Who&When's task: given a failed trajectory, name the failure-responsible agent and the decisive error
step, the step whose mistake made the task fail. Its protocols, followed here:
- all-at-once: the model reads the whole log once and names the agent and the step;
- step-by-step: the model reads the log up to each step in turn and judges whether that step is the
  decisive error; the first step judged so is the answer (none judged so: no attribution);
- binary-search: the model is shown a segment and says which half holds the decisive error; the
  segment halves until one step is left.
Its metrics, which `trajscope agreement --human` computes against people's labels: agent-level
accuracy, the share of failed trajectories whose responsible agent is named correctly, and step-level
accuracy, the share whose decisive step is named exactly.
"""
from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trajscope.engine.llm import ModelConfig, ResponseCache
from trajscope.warehouse import DEFAULT_LIMITS, ReadLimits
from trajscope.warehouse.verdicts import StoreReport, VerdictRow, store_verdicts

from ._inputs import read_rule_hints, read_views, select_slice
from ._render import TrajectoryView, normalise_citation, render_trajectory
from ._session import CallTally, ask_json, model_session, run_all

PROTOCOLS = ("all-at-once", "step-by-step", "binary-search", "hybrid")
PROMPT_VERSION = "attribution-v2"
# Wrong answers: the task failed. A slice of other trajectories is accepted (a user may ask anyway).
DEFAULT_WHERE = "correct IS NOT TRUE"

SYSTEM = ("You find the decisive error in a failed trajectory of an agent: the step whose mistake made the "
          "task fail (had it been right, the task could have succeeded). Steps are numbered in square brackets; "
          "[GOLD] marks a gold passage. Reply with one JSON object and nothing else.")
STEP_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"agent": {"type": "string"}, "step": {"type": "string"}, "reason": {"type": "string"}},
    "required": ["step", "reason"],
}


def step_schema(view: TrajectoryView, shown: Sequence[str] | None = None) -> dict[str, Any]:
    """STEP_SCHEMA with the step (and agent) restricted to the trajectory's own: a grammar-constrained model
    (the embedded one) can then name no step outside it; a reply that does anyway is still an error verdict."""
    schema = {**STEP_SCHEMA, "properties": dict(STEP_SCHEMA["properties"])}
    schema["properties"]["step"] = {"type": "string", "enum": list(shown or view.labels)}
    if view.agents:
        schema["properties"]["agent"] = {"type": "string", "enum": view.agents}
    return schema
JUDGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"decisive": {"type": "boolean"}, "reason": {"type": "string"}},
    "required": ["decisive", "reason"],
}
HALF_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"half": {"type": "string", "enum": ["first", "second"]}, "reason": {"type": "string"}},
    "required": ["half", "reason"],
}


@dataclass(frozen=True)
class Attribution:
    """What a protocol concluded for one trajectory: a step (and agent), or why not."""

    step_index: int | None
    agent: str | None
    reason: str | None
    error: str | None = None


def _who(view: TrajectoryView) -> str:
    agents = view.agents
    return (f" Agents in this log: {', '.join(agents)}; also name the agent responsible." if agents else "")


def all_at_once_messages(view: TrajectoryView, rendered: str, hints: str | None = None) -> list[dict[str, str]]:
    """One call: the whole (budgeted) log, the agent and the step asked for."""
    extra = f"\n\nWhat trajscope's rules found (may be wrong):\n{hints}" if hints else ""
    user = (f"Failed trajectory:\n{rendered}{extra}\n\nWhich step is the decisive error?{_who(view)} Answer with JSON: "
            '{"agent": "name or empty", "step": "the step\'s label, as in the square brackets", '
            '"reason": "one sentence"}')
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def step_messages(view: TrajectoryView, rendered: str, label: str) -> list[dict[str, str]]:
    """Step-by-step: the log up to one step, and whether that step is the decisive error."""
    user = (f"Failed trajectory, up to step [{label}]:\n{rendered}\n\nIs step [{label}] the decisive error? "
            'Answer with JSON: {"decisive": true or false, "reason": "one sentence"}')
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def half_messages(view: TrajectoryView, rendered: str, first: tuple[str, str], second: tuple[str, str]
                  ) -> list[dict[str, str]]:
    """Binary search: a segment, and which of its halves holds the decisive error."""
    user = (f"Failed trajectory, steps [{first[0]}] to [{second[1]}]:\n{rendered}\n\nThe decisive error is in this "
            f"segment. Is it in the first half (steps [{first[0]}] to [{first[1]}]) or the second half (steps "
            f"[{second[0]}] to [{second[1]}])? Answer with JSON: "
            '{"half": "first" or "second", "reason": "one sentence"}')
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def _agent_of(view: TrajectoryView, step_index: int) -> str | None:
    return next((s.agent for s in view.steps if s.step_index == step_index), None)


async def _all_at_once(model: Any, view: TrajectoryView, budget: int, tally: CallTally,
                       hints: str | None = None) -> Attribution:
    rendered = render_trajectory(view, budget)
    shown = [s.label for s in view.steps if s.step_index in set(rendered.shown)]
    reply, error = await ask_json(model, all_at_once_messages(view, rendered.text, hints), step_schema(view, shown),
                                  tally)
    if reply is None:
        return Attribution(None, None, None, error)
    label = normalise_citation(reply.get("step", ""))
    if label not in view.labels:
        return Attribution(None, None, None, f"named step {reply.get('step')!r}, which is not in the trajectory")
    k = view.labels[label]
    named = reply.get("agent")
    # The model's agent when it is one of the log's; otherwise the speaker of the step it named.
    agent = named if isinstance(named, str) and named in view.agents else _agent_of(view, k)
    reason = reply.get("reason")
    return Attribution(k, agent, reason if isinstance(reason, str) else None)


async def _step_by_step(model: Any, view: TrajectoryView, budget: int, tally: CallTally) -> Attribution:
    for n, step in enumerate(view.steps):
        rendered = render_trajectory(view, budget, view.steps[: n + 1])
        reply, error = await ask_json(model, step_messages(view, rendered.text, step.label), JUDGE_SCHEMA, tally)
        if reply is None:
            return Attribution(None, None, None, f"at step [{step.label}]: {error}")
        if not isinstance(reply.get("decisive"), bool):
            return Attribution(None, None, None, f"at step [{step.label}]: reply has no true/false decisive")
        if reply["decisive"]:
            reason = reply.get("reason")
            return Attribution(step.step_index, step.agent, reason if isinstance(reason, str) else None)
    return Attribution(None, None, None, "step-by-step: no step was judged the decisive error")


async def _binary_search(model: Any, view: TrajectoryView, budget: int, tally: CallTally) -> Attribution:
    steps = view.steps
    lo, hi, reason = 0, len(steps) - 1, None
    while lo < hi:
        mid = (lo + hi) // 2
        rendered = render_trajectory(view, budget, steps[lo: hi + 1])
        halves = (steps[lo].label, steps[mid].label), (steps[mid + 1].label, steps[hi].label)
        reply, error = await ask_json(model, half_messages(view, rendered.text, *halves), HALF_SCHEMA, tally)
        if reply is None:
            return Attribution(None, None, None, f"in steps [{steps[lo].label}] to [{steps[hi].label}]: {error}")
        if reply.get("half") not in ("first", "second"):
            return Attribution(None, None, None, "reply has no half first / second")
        reason = reply.get("reason") if isinstance(reply.get("reason"), str) else None
        lo, hi = (lo, mid) if reply["half"] == "first" else (mid + 1, hi)
    return Attribution(steps[lo].step_index, steps[lo].agent, reason)


async def attribute_view(model: Any, view: TrajectoryView, protocol: str, *, token_budget: int,
                         hints: str | None = None) -> VerdictRow:
    """One trajectory under one protocol, as a stored attribution (an error verdict when it found none)."""
    tally = CallTally()
    if not view.steps:
        found = Attribution(None, None, None, "the trajectory has no steps")
    elif protocol == "all-at-once":
        found = await _all_at_once(model, view, token_budget, tally)
    elif protocol == "hybrid":
        found = await _all_at_once(model, view, token_budget, tally, hints or "(no rule applies to this log)")
    elif protocol == "step-by-step":
        found = await _step_by_step(model, view, token_budget, tally)
    elif protocol == "binary-search":
        found = await _binary_search(model, view, token_budget, tally)
    else:
        raise ValueError(f"unknown protocol {protocol!r}; choose one of {', '.join(PROTOCOLS)}")
    return VerdictRow(
        scanner="attribution", trajectory_id=view.trajectory_id, record_hash=view.record_hash,
        model=model.config.name, prompt_version=PROMPT_VERSION, protocol=protocol,
        verdict="attributed" if found.error is None else "error", explanation=found.reason,
        step_index=found.step_index, agent=found.agent, error=found.error, token_budget=token_budget,
        n_calls=tally.calls, tokens_in=tally.tokens_in, tokens_out=tally.tokens_out, cost_usd=tally.cost_usd,
        cached=tally.all_cached, cited_steps=[found.step_index] if found.step_index is not None else [],
    )


@dataclass
class AttributeReport:
    """What an attribution pass asked and stored."""

    sql: str
    protocol: str
    model: str
    n_trajectories: int = 0
    attributed: int = 0
    errors: list[str] = field(default_factory=list)
    requests: int = 0
    cache_hits: int = 0
    cost_usd: float = 0.0
    hints_used: bool = False
    stored: StoreReport | None = None
    verdicts: list[VerdictRow] = field(default_factory=list)

    @property
    def method(self) -> str:
        """The method name of these attributions in step_attributions."""
        return f"llm:{self.protocol}:{self.model}"

    def summary(self) -> str:
        hints = "; rules' evidence funnel and candidate step shown" if self.hints_used else ""
        return (f"{self.method}: {self.n_trajectories} trajectories, {self.attributed} attributed, "
                f"{len(self.errors)} without an attribution; {self.requests} model calls, {self.cache_hits} from the "
                f"cache, cost ${self.cost_usd:.4f}{hints}")


def attribute(db_path: str | Path | None, runs: Sequence[str], protocol: str, *, config: ModelConfig,
              where: str | None = DEFAULT_WHERE, limit: int | None = None, cache: ResponseCache | None = None,
              concurrency: int = 8, token_budget: int = 2000, progress: bool = False,
              limits: ReadLimits = DEFAULT_LIMITS) -> AttributeReport:
    """`trajscope attribute`: one attribution per trajectory of the slice (by default the failed ones), stored."""
    if protocol not in PROTOCOLS:
        raise ValueError(f"unknown protocol {protocol!r}; choose one of {', '.join(PROTOCOLS)}")
    sql, ids = select_slice(db_path, runs, where, limit, limits=limits)
    views = read_views(db_path, ids, limits=limits)
    hints = read_rule_hints(db_path, ids, limits=limits) if protocol == "hybrid" else {}
    report = AttributeReport(sql=sql, protocol=protocol, model=config.name, n_trajectories=len(views),
                             hints_used=bool(hints))
    if not views:
        return report

    async def go() -> tuple[list[VerdictRow], Any]:
        async with model_session(config, cache) as model:
            rows = await run_all(
                views, lambda v: attribute_view(model, v, protocol, token_budget=token_budget,
                                                hints=hints.get(v.trajectory_id)),
                concurrency=concurrency, desc=f"attribute {protocol}", progress=progress)
            return rows, model.usage

    rows, usage = asyncio.run(go())
    report.verdicts = rows
    report.stored = store_verdicts(db_path, rows)
    report.attributed = sum(r.verdict == "attributed" for r in rows)
    report.errors = [f"{r.trajectory_id}: {r.error}" for r in rows if r.error]
    report.requests, report.cache_hits, report.cost_usd = usage.requests, usage.cache_hits, usage.cost_usd
    return report


__all__ = ["DEFAULT_WHERE", "PROMPT_VERSION", "PROTOCOLS", "AttributeReport", "Attribution",
           "all_at_once_messages", "attribute", "attribute_view", "half_messages", "step_messages",
           "step_schema"]
