"""One fork episode: the parent's controller replayed from the cache up to step k, the intervention, the rest live.

The controller runs unchanged. A probe watches its recorder (how many steps are logged), the model
wrapper answers every call before the intervention from the response cache only, and the
environment wrapper and the final review apply the environment- and review-level interventions.
"""
from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import msgspec

from trajscope.engine.controllers import EpisodeContext
from trajscope.engine.controllers._gates import EvidenceState, GateDecision
from trajscope.engine.environment._environment import normalised_query
from trajscope.engine.environment._observations import passage as passage_text
from trajscope.engine.environment._observations import search_results
from trajscope.engine.environment._result import ToolResult
from trajscope.engine.environment._tokens import estimate_tokens
from trajscope.engine.llm import ChatModel, Completion
from trajscope.engine.llm._completion import ToolCall, parse_json_object
from trajscope.engine.prompts import render_prompt
from trajscope.format import (
    SEARCH_KINDS,
    Candidate,
    ErrorStep,
    FinalStep,
    ForkOrigin,
    Question,
    ReadStep,
    Run,
    SearchStep,
    StepBase,
    Trajectory,
    counts_as_read,
)

from ._interventions import ForkError, Intervention, parse_register_fix

REJECT_GATE = "fork_reject_final"


def comparable(step: StepBase) -> dict[str, Any]:
    """A step as compared between parent and replay: everything but whether the cache answered it."""
    data = msgspec.to_builtins(step)
    data.pop("cached", None)
    return data


def _as_seen(step: StepBase) -> dict[str, Any]:
    """An imported step as a replay must reproduce it: the action and what it showed (the raw reply and
    the accounting were the original agent's)."""
    data = comparable(step)
    for key in ("raw", "thought", "tokens_in", "tokens_out", "latency_ms", "cost_usd"):
        data.pop(key, None)
    return data


def first_difference(mine: Any, theirs: Any, path: str = "") -> str:
    """Where two step dicts first differ, as `field[i].field: replay vs parent` (the failure names it)."""
    if isinstance(mine, dict) and isinstance(theirs, dict):
        for key in sorted(set(mine) | set(theirs), key=str):
            if mine.get(key) != theirs.get(key):
                return first_difference(mine.get(key), theirs.get(key), f"{path}.{key}" if path else str(key))
    elif isinstance(mine, list) and isinstance(theirs, list) and len(mine) == len(theirs):
        for i, (a, b) in enumerate(zip(mine, theirs, strict=True)):
            if a != b:
                return first_difference(a, b, f"{path}[{i}]")
    return f"{path or 'the step'}: {str(mine)[:80]!r} in the replay, {str(theirs)[:80]!r} in the parent"


def reply_start(parent: Trajectory, k: int) -> int:
    """The step index at which the model call that produced step k was made (a salvaged answer's
    ErrorStep precedes the answer step of the same reply)."""
    before = parent.steps[k - 1] if k > 0 else None
    if isinstance(before, ErrorStep) and before.error_type == "malformed_answer":
        return k - 1
    return k


@dataclass
class ForkPlan:
    """What one child does: its parent, the step and the resolved intervention."""

    parent: Trajectory
    step_index: int
    intervention: Intervention
    rule: str | None = None
    placebo: bool = False  # a control (auto_placebo's interventions, besides the placebo intervention itself)


class ForkProbe:
    """Follows one replayed episode: its recorder, whether the intervention fired, the prefix's cost."""

    def __init__(self, plan: ForkPlan):
        self.plan = plan
        self.recorder: Any = None
        self.fired = False
        self.failure: ForkError | None = None
        self.prefix_cache_hits = 0
        # An imported parent's prefix is answered from its log (its agent's calls are in no cache of ours).
        self.from_log = plan.parent.run.source != "engine"
        self.prefix_log_replays = 0
        self.prefix_model_calls = 0
        self.fired_at_index: int | None = None
        self.environment: Any = None
        self.state_at_fork: dict[str, Any] = {}  # the environment's state when the intervention applied

    def watch(self, recorder: Any) -> None:
        """Called by ControllerBase.run with the episode's recorder."""
        self.recorder = recorder

    @property
    def index(self) -> int:
        """The index the next recorded step will get."""
        return len(self.recorder.steps) if self.recorder is not None else 0

    def fail(self, message: str) -> ForkError:
        """Record why the fork failed; the error is raised into the controller (which ends the episode)."""
        self.failure = ForkError(f"{self.plan.parent.trajectory_id} at step {self.plan.step_index}: {message}")
        return self.failure

    def check_prefix(self, upto: int) -> None:
        """The replay's steps before `upto` must equal the parent's (else the state was not rebuilt)."""
        mine = self.recorder.steps[:upto] if self.recorder is not None else []
        theirs = self.plan.parent.steps[:upto]
        same = comparable if not self.from_log else _as_seen
        if len(mine) != len(theirs):
            raise self.fail(f"the replay reached the intervention after {len(mine)} steps, the parent's "
                            f"prefix has {len(theirs)}")
        for i, (a, b) in enumerate(zip(mine, theirs, strict=True)):
            if same(a) != same(b):
                raise self.fail(f"the replay diverged from the parent at step {i} ({type(a).__name__} vs "
                                f"{type(b).__name__}; {first_difference(same(a), same(b))}): the corpus, "
                                "retriever or controller is not the parent's")

    def fire(self) -> None:
        """The intervention applies now: the prefix is checked first."""
        self.check_prefix(min(self.index, self.plan.step_index))
        self.fired = True
        self.fired_at_index = self.index
        env = self.environment
        if env is not None:  # the environment's state when the intervention applied (tests compare it)
            self.state_at_fork = {"search_count": env.search_count, "read_count": env.read_count,
                                  "visited_ids": sorted(env.visited_ids), "read_ids": sorted(env.read_ids)}
        if self.recorder is not None:
            self.state_at_fork["register_events"] = len(self.recorder.register_events)


def _tool_names(request: Mapping[str, Any]) -> list[str]:
    names = [t.get("function", {}).get("name", "") for t in request.get("tools") or ()]
    schema = request.get("response_schema") or {}
    for branch in schema.get("oneOf") or schema.get("anyOf") or ():
        const = (branch.get("properties", {}).get("action") or {}).get("const")
        if const:
            names.append(const)
    return names


def log_action(step: StepBase, tools: list[str]) -> tuple[str | None, dict[str, Any]]:
    """The action of this tool set that repeats a logged step (None: it has no equivalent)."""
    if isinstance(step, SearchStep):
        kind = str(type(step).__struct_config__.tag)
        name = kind if kind in tools else next((t for t in SEARCH_KINDS if t in tools), None)
        query = step.query or ""
        return name, ({"keywords": query} if name == "keyword_search" else {"query": query})
    if isinstance(step, ReadStep):
        name = next((t for t in ("read", "read_chunk") if t in tools), None)
        return name, {"chunk_id": list(step.chunk_ids) or [p.chunk_id for p in step.passages]}
    if isinstance(step, FinalStep):
        return ("final" if "final" in tools else None), {"answer": step.answer or ""}
    return None, {}


def _action_reply(request: Mapping[str, Any], name: str, arguments: dict[str, Any], like: Completion | None
                  ) -> Completion:
    """A reply calling one action, in the protocol of the request (native tool call or JSON action)."""
    raw = json.dumps(arguments, ensure_ascii=False)
    base = like or Completion(text="")
    if request.get("response_schema") is not None:
        text = json.dumps({"action": name, "arguments": arguments}, ensure_ascii=False)
        return dataclasses.replace(base, text=text, tool_calls=[], parsed=parse_json_object(text)[0],
                                   parse_error=None)
    return dataclasses.replace(base, text="", tool_calls=[ToolCall(name, arguments, None, raw)],
                               parsed=None, parse_error=None)


def _with_query(request: Mapping[str, Any], reply: Completion, query: str) -> Completion:
    """The cached reply with the query of its first action replaced."""
    if reply.tool_calls:
        first = reply.tool_calls[0]
        key = "keywords" if first.name == "keyword_search" else "query"
        args = {**first.arguments, key: query}
        calls = [ToolCall(first.name, args, first.call_id, json.dumps(args, ensure_ascii=False)),
                 *reply.tool_calls[1:]]
        return dataclasses.replace(reply, tool_calls=calls)
    value, _ = parse_json_object(reply.text)
    if not isinstance(value, dict) or not isinstance(value.get("arguments"), dict):
        raise ForkError("replace_query: the reply at the step is not a search action")
    key = "keywords" if value.get("action") == "keyword_search" else "query"
    value = {**value, "arguments": {**value["arguments"], key: query}}
    text = json.dumps(value, ensure_ascii=False)
    return dataclasses.replace(reply, text=text, parsed=value)


def _with_register_fix(reply: Completion, fix: str) -> Completion:
    """The cached register update with ITEM's proposal replaced by the fix."""
    item, status, note = parse_register_fix(fix)
    value, _ = parse_json_object(reply.text)
    value = dict(value) if isinstance(value, dict) else {"updates": []}
    updates = [u for u in value.get("updates") or [] if not (isinstance(u, dict) and u.get("id") == item)]
    proposal: dict[str, Any] = {"id": item, "status": status}
    if note:
        proposal["note"] = note
    if status == "retired":
        proposal["reason"] = note or "retired by a fork's fix_register"
    value["updates"] = [*updates, proposal]
    text = json.dumps(value, ensure_ascii=False)
    return dataclasses.replace(reply, text=text, parsed=value, parse_error=None)


class ForkModel:
    """The episode's model: before the intervention every call is answered from the response cache
    (a miss fails the fork, the prefix must cost nothing); the intervention's own reply; then live."""

    def __init__(self, inner: ChatModel, probe: ForkProbe, *, swap: ChatModel | None = None):
        self.inner, self.probe, self.swap = inner, probe, swap
        self.config = inner.config
        self.usage = inner.usage

    @property
    def _start(self) -> int:
        return reply_start(self.probe.plan.parent, self.probe.plan.step_index)

    async def complete(self, messages: list[dict[str, Any]], **kwargs: Any) -> Completion:
        probe, intervention = self.probe, self.probe.plan.intervention
        if probe.fired:
            model = self.swap if self.swap is not None else self.inner
            return await model.complete(messages, **kwargs)
        index = probe.index
        if intervention.kind.hook == "reply" and index >= self._start:
            if index > self._start:
                raise probe.fail(f"no model call was made at step {self._start}: step "
                                 f"{probe.plan.step_index} is not the start of a model reply")
            return await self._intervene(messages, kwargs)
        return self._cached(messages, kwargs)

    def _cached(self, messages: list[dict[str, Any]], kwargs: dict[str, Any]) -> Completion:
        if self.probe.from_log:
            return self._from_log(kwargs)
        cache = self.inner.cache
        request = self.inner.build_request(messages, tools=kwargs.get("tools"),
                                           response_schema=kwargs.get("response_schema"),
                                           **{k: v for k, v in kwargs.items() if k not in ("tools", "response_schema")})
        stored = cache.get(self.inner.cache_key(request)) if cache is not None else None
        if stored is None:
            raise self.probe.fail(
                f"the model call at step {self.probe.index} is not in the response cache (the parent ran "
                "without the cache, with another cache file, or against another endpoint): the prefix "
                "would cost model calls and could differ; fork with the parent's --cache-path and --model")
        self.probe.prefix_cache_hits += 1
        self.inner.usage.cache_hits += 1
        return self.inner._completion(stored, cached=True, structured=kwargs.get("response_schema") is not None)

    def _from_log(self, kwargs: dict[str, Any]) -> Completion:
        """The imported agent's logged action at this step, as a reply in this controller's tool set."""
        probe = self.probe
        index = probe.index
        steps = probe.plan.parent.steps
        if index >= len(steps):
            raise probe.fail(f"the replay asked for a model reply at step {index}, past the parent's last step")
        step = steps[index]
        request = {"tools": kwargs.get("tools"), "response_schema": kwargs.get("response_schema")}
        name, arguments = log_action(step, _tool_names(request))
        if name is None:
            raise probe.fail(f"step {index} ({type(step).__name__}) has no equivalent in this controller's tools "
                             f"({', '.join(_tool_names(request))})")
        probe.prefix_log_replays += 1
        like = Completion(text=step.thought or "", tokens_in=step.tokens_in, tokens_out=step.tokens_out,
                          latency_ms=step.latency_ms, cost_usd=step.cost_usd, cached=True)
        reply = _action_reply(request, name, arguments, like)
        if request.get("response_schema") is None and step.thought:
            reply = dataclasses.replace(reply, text=step.thought)
        return reply

    async def _intervene(self, messages: list[dict[str, Any]], kwargs: dict[str, Any]) -> Completion:
        probe, intervention = self.probe, self.probe.plan.intervention
        probe.fire()
        request = {"tools": kwargs.get("tools"), "response_schema": kwargs.get("response_schema")}
        name, arg = intervention.name, intervention.argument or ""
        if name == "swap_model":
            assert self.swap is not None  # the runner builds it for swap_model
            return await self.swap.complete(messages, **kwargs)
        if name in ("inject_gold", "placebo", "force_read"):
            tools = _tool_names(request)
            read_tool = next((t for t in ("read", "read_chunk") if t in tools), None)
            if read_tool is None:
                raise probe.fail(f"{name}: the model call at this step offers no read action "
                                 f"(actions: {', '.join(tools) or 'none'})")
            return _action_reply(request, read_tool, {"chunk_id": arg}, None)
        reply = self._cached(messages, kwargs)
        # the step's own reply, rewritten: counted apart from the prefix
        if probe.from_log:
            probe.prefix_log_replays -= 1
        else:
            probe.prefix_cache_hits -= 1
        if name == "replace_query":
            return _with_query(request, reply, arg)
        if name == "fix_register":
            return _with_register_fix(reply, arg)
        raise probe.fail(f"{name} is not a reply intervention")

    async def close(self) -> None:
        """The runner owns the wrapped models."""


class ForkEnvironment:
    """The episode's ToolEnvironment with the environment-level interventions and the final review."""

    def __init__(self, inner: Any, probe: ForkProbe):
        self._inner = inner
        self._probe = probe
        probe.environment = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    @property
    def final_reviews(self) -> tuple[Callable[[str, EvidenceState], GateDecision | None], ...]:
        """reject_final: the final at the fork step is rejected with the Read-Gate corrective text."""
        probe = self._probe
        if probe.plan.intervention.name != "reject_final" or probe.fired:
            return ()

        def review(answer: str, state: EvidenceState) -> GateDecision | None:
            if probe.index != probe.plan.step_index:
                return None
            probe.fire()
            return GateDecision(REJECT_GATE, "fork: the final at this step is rejected", render_prompt("gate_read"))

        return (review,)

    def call(self, action: str, args: Any) -> Any:
        probe = self._probe
        intervention = probe.plan.intervention
        applies = (intervention.kind.hook == "environment" and not probe.fired
                   and probe.index == probe.plan.step_index)
        visited_before = set(self._inner.visited_ids) if applies else set()
        if probe.from_log and not probe.fired:
            result = self._replay_logged(action)
        else:
            result = self._inner.call(action, args)
        if applies and isinstance(result.step, SearchStep):
            probe.fire()
            self._rewrite_candidates(result, intervention, visited_before)
        return result

    def _replay_logged(self, action: str) -> Any:
        """An imported step's own results (its candidates or passages), with the environment's state moved as
        if the tool had returned them; the observation is rendered the way this environment renders it."""
        env, probe = self._inner, self._probe
        step = msgspec.convert(msgspec.to_builtins(probe.plan.parent.steps[probe.index]), type(
            probe.plan.parent.steps[probe.index]))
        env.turns += 1
        if isinstance(step, SearchStep):
            env.search_count += 1
            titles = {c.chunk_id: env.corpus[c.chunk_id].title for c in step.candidates if c.chunk_id in env.corpus}
            text = search_results(action, step.query or "", step.candidates, titles, env.read_tool)
            env._query_cache.setdefault((action, normalised_query(action, step.query or "")),
                                        (env.turns, list(step.candidates)))
            env.visited_ids.update(c.chunk_id for c in step.candidates)
        elif isinstance(step, ReadStep):
            parts = []
            for passage in step.passages:
                chunk = env.corpus[passage.chunk_id]
                parts.append(passage_text(chunk))
                env.read_ids.add(chunk.chunk_id)
                env.visited_ids.add(chunk.chunk_id)
                env._first_read_turn.setdefault(chunk.chunk_id, env.turns)
            env.read_count += counts_as_read(step)
            text = "\n\n".join(parts)
        else:
            return env.call(action, {"answer": getattr(step, "answer", "")})
        env.context_tokens += estimate_tokens(text)
        return ToolResult(step=step, text=text)

    def _rewrite_candidates(self, result: Any, intervention: Intervention, visited_before: set[str]) -> None:
        """The search's candidates edited, with the environment's state (shown ids, repeat cache, context) kept
        consistent, as if the retriever had returned the edited list."""
        env, step = self._inner, result.step
        chunk = intervention.argument or ""
        kept = [c for c in step.candidates if c.chunk_id != chunk]
        if intervention.name == "inject_candidate":
            target = env.corpus[chunk]
            kept = [Candidate(chunk_id=chunk, rank=1, score=None, retriever="fork", snippet=target.text[:200]), *kept]
        candidates = [msgspec.structs.replace(c, rank=i) for i, c in enumerate(kept, start=1)]
        titles = {c.chunk_id: env.corpus[c.chunk_id].title for c in candidates if c.chunk_id in env.corpus}
        text = search_results(step.tool_name or "search", step.query or "", candidates, titles, env.read_tool)
        old = result.text
        step.candidates, step.observation = candidates, text
        result.text = "\n\n".join([text] + [s.observation for s in result.extra_steps])
        env.context_tokens += estimate_tokens(result.text) - estimate_tokens(old)
        if intervention.name == "inject_candidate":
            env.visited_ids.add(chunk)
        elif chunk not in visited_before:
            env.visited_ids.discard(chunk)
        key = (step.tool_name, normalised_query(step.tool_name or "search", step.query or ""))
        if key in env._query_cache:
            env._query_cache[key] = (env._query_cache[key][0], candidates)


@dataclass
class ForkEpisodeContext:
    """The EpisodeContext a replayed controller sees: the run's, with the fork's model and environment."""

    model: Any
    run: Run
    make_environment: Callable[..., Any]
    retriever: Any
    corpus: Mapping[str, Any]
    params: dict[str, Any] = field(default_factory=dict)
    watch_recorder: Callable[[Any], None] | None = None


class ForkController:
    """Runs, for each question, the fork its plan describes with the parent run's controller."""

    def __init__(self, inner: Any, plans: Mapping[str, ForkPlan], *, swap: ChatModel | None = None):
        self.inner, self.plans, self.swap = inner, plans, swap
        self.name = getattr(inner, "name", "controller")
        self.read_action = getattr(inner, "read_action", True)
        self.searches = getattr(inner, "searches", True)
        self.probes: dict[str, ForkProbe] = {}

    async def run(self, question: Question, ctx: EpisodeContext) -> Trajectory:
        plan = self.plans[question.question_id]
        probe = ForkProbe(plan)
        self.probes[question.question_id] = probe

        def make_environment(**overrides: Any) -> Any:
            return ForkEnvironment(ctx.make_environment(**overrides), probe)

        episode = ForkEpisodeContext(
            model=ForkModel(ctx.model, probe, swap=self.swap), run=ctx.run, make_environment=make_environment,
            retriever=ctx.retriever, corpus=ctx.corpus, params=dict(ctx.params), watch_recorder=probe.watch)
        trajectory = await self.inner.run(question, episode)
        if probe.failure is None and not probe.fired:
            probe.fail("the replay ended before the intervention applied "
                       f"({len(trajectory.steps)} steps; the step is not what the intervention needs)")
        if probe.failure is None:
            try:
                probe.check_prefix(min(plan.step_index, len(trajectory.steps)))
            except ForkError:
                pass
        origin = ForkOrigin(
            parent_trajectory_id=plan.parent.trajectory_id, parent_run_id=plan.parent.run.run_id,
            step_index=plan.step_index, intervention=plan.intervention.name, argument=plan.intervention.argument,
            rule=plan.rule, placebo=plan.placebo or plan.intervention.placebo,
            prefix_model_calls=probe.prefix_model_calls,
            prefix_cache_hits=probe.prefix_cache_hits,
            prefix_log_replays=probe.prefix_log_replays if probe.from_log else None)
        changes: dict[str, Any] = {"fork": origin, "metadata": {**trajectory.metadata,
                                                                 "fork_state": probe.state_at_fork}}
        if probe.failure is not None:
            changes.update(end_reason="error", error=f"fork failed: {probe.failure}", final_answer=None)
        return msgspec.structs.replace(trajectory, **changes)
