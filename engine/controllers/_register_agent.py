"""ExecutionRAG as the paper ran it: a tool-using agent guided by the requirement register (App. A.1, A.3, B)."""
from __future__ import annotations

import math
from typing import Any

from trajscope.engine.prompts import render_prompt
from trajscope.format import BudgetNudgeStep, ReadStep, RegisterUpdateStep, SearchStep, StepBase

from ._actions import Action, ActionSpace
from ._base import EpisodeResult, decoding_overrides, history_limit, output_limit, resolve_protocol
from ._gates import first_rejection
from ._history import fit_history
from ._register import ItemChange, progress_delta, select_active
from ._register_episode import RegisterEpisode
from ._tool_loop import LoopSettings, ToolLoop

# System prompt, question and the register injected after warm-up stay when older observations are elided.
_KEPT_HEAD = 3


def retrieved_ids(steps: list[StepBase]) -> list[str]:
    """Chunk ids one loop's tool calls brought: search candidates (not dedup notices) and passages read."""
    ids: list[str] = []
    for step in steps:
        if isinstance(step, SearchStep) and not step.deduplicated:
            ids.extend(c.chunk_id for c in step.candidates)
        elif isinstance(step, ReadStep):
            ids.extend(p.chunk_id for p in step.passages)
    return ids


def loop_query(steps: list[StepBase]) -> str:
    """The agent's own queries of one loop, for the update step's args."""
    parts = []
    for step in steps:
        if isinstance(step, SearchStep):
            value = (step.args or {}).get("query") or (step.args or {}).get("keywords")
            parts.append(" ".join(value) if isinstance(value, list) else str(value or ""))
    return "; ".join(p for p in parts if p)


class RegisterAgentLoop(ToolLoop):
    """The A-RAG tool loop with the register: update after each loop, deltas, nudges, answer from S."""

    def __init__(self, state: RegisterEpisode, **kwargs: Any):
        super().__init__(**kwargs)
        self.state = state
        self.budget = state.budget  # the register's own calls (updates, answer) spend the same budget
        budget = self.settings.max_turns
        self.nudge_at = max(1, math.ceil(state.params["nudge_fraction"] * budget))
        self.agent_answer: str | None = None

    def _final(self, action: Action, completion: Any, thought: str | None) -> tuple[str | None, str]:
        """The agent stops; its reply is kept, and the answer is then composed from the register (G)."""
        raw = action.arguments.get("answer")
        answer = str(raw).strip() if isinstance(raw, (str, int, float)) else ""
        if not answer:
            return None, self._invalid(Action("final", action.arguments, action.call_id,
                                              "final needs a non-empty \"answer\""), completion, thought)
        # The paper's agent has no gate; an environment's own review of a stop (a fork's reject_final) can still
        # reject it, and the agent goes on from the corrective observation.
        decision = first_rejection(getattr(self.env, "final_reviews", ()), answer, self.evidence_state())
        if decision is not None:
            return None, self._reject(decision, answer, action, completion, thought)
        self.agent_answer = answer
        self.recorder.metadata["agent_answer"] = answer
        return answer, ""

    async def run(self, messages: list[dict[str, Any]]) -> EpisodeResult:
        history = list(messages)
        decoding = dict(self.settings.decoding or {})
        state = self.state
        while (self.turns < self.settings.max_turns and not state.context_budget_exceeded
               and not self.env.budget_exhausted):
            shown = sorted(self.env.visited_ids)
            fitted = fit_history(history, self.settings.max_history_tokens, keep_head=_KEPT_HEAD)
            completion = await self.model.complete(fitted, **self.protocol.request(self.space, shown), **decoding)
            self.turns += 1
            state.charge("\n".join(str(m.get("content") or "") for m in fitted), completion)
            parsed = self.protocol.parse(completion, self.space, self.turns)
            first = self.recorder.next_index
            answer, observations = self._act(parsed, completion)
            self._note_counters()
            if answer is not None:
                self.recorder.metadata["loops"] = self.turns
                return await state.answer(forced=False, agent_answer=answer)
            if self.invalid_actions > self.settings.max_invalid_actions:
                return None, "error", (f"gave up after {self.invalid_actions} invalid actions "
                                       f"(cap {self.settings.max_invalid_actions})")
            history.extend(self.protocol.messages(parsed, observations))
            for text in await self._after_loop(self.turns, self.recorder.steps[first:]):
                history.append({"role": "user", "content": text})
            if state.register.is_clear:  # ReadyToAnswer(q, S_t)
                self.recorder.metadata["loops"] = self.turns
                return await state.answer(forced=False)
        self.recorder.metadata["loops"] = self.turns
        self.recorder.metadata["forced_at_turn"] = self.turns
        return await state.answer(forced=True)

    async def _after_loop(self, loop: int, steps: list[StepBase]) -> list[str]:
        """U and ApplyInvariants on ΔC_t, then the progress delta and the nudge; returns the injected texts."""
        state, injected = self.state, []
        new_ids = state.expose(retrieved_ids(steps))
        changes: list[ItemChange] = []
        if new_ids and state.params["iterative_updates"]:
            target, _ = select_active(state.register, set())
            changes = await state.update(target.item_id if target else "", loop_query(steps), new_ids)
        if not state.register.is_clear and not any(i.status == "active" for i in state.register.items.values()):
            item, selection = select_active(state.register, set())
            if item is not None and selection:
                index = self.recorder.add(RegisterUpdateStep(phase="select", args={"item_id": item.item_id},
                                                             observation=f"{item.item_id} is the search target"))
                state.log_changes(selection, index)
                changes = changes + selection
        delta = progress_delta(changes, state.register)
        if delta is not None:
            text = render_prompt("progress_delta", changes=delta[0], open=delta[1])
            self.recorder.add(RegisterUpdateStep(phase="progress_delta", args={"loop": loop}, observation=text))
            state.notes.append(text)
            injected.append(text)
        if loop >= self.nudge_at:  # every loop from ⌈0.8·B⌉ on
            text = render_prompt("budget_nudge", used=loop, budget=self.settings.max_turns)
            self.recorder.add(BudgetNudgeStep(message=text, observation=text, args={"loop": loop}))
            state.notes.append(text)
            injected.append(text)
        return injected


async def run_register_agent(state: RegisterEpisode) -> EpisodeResult:
    """Warm-up (seed retrieval and S_0), the register injected, then the agent loop."""
    ctx, params, recorder = state.ctx, state.params, state.recorder
    await state.initialise()
    protocol = resolve_protocol(ctx, params, text_is_final=True)  # as A-RAG: a plain reply is the final
    recorder.metadata["protocol"] = protocol.name
    space = ActionSpace(state.env.tool_schemas("tools"))
    system = render_prompt("execution_rag_system", tools=space.describe(), max_turns=params["max_loops"])
    if protocol.system_suffix():
        system += "\n" + protocol.system_suffix()
    loop = RegisterAgentLoop(
        state, model=ctx.model, environment=state.env, protocol=protocol, space=space, recorder=recorder,
        question=state.question.text, corpus=ctx.corpus,
        settings=LoopSettings(
            max_turns=params["max_loops"], max_invalid_actions=params["max_invalid_actions"],
            decoding={**decoding_overrides(params), **output_limit(ctx, params)},
            max_history_tokens=history_limit(ctx, params),
        ),
    )
    return await loop.run([
        {"role": "system", "content": system},
        {"role": "user", "content": render_prompt("question", question=state.question.text)},
        {"role": "user", "content": render_prompt("register_inject", register=state.register.render())},
    ])
