"""The agent's act-observe loop over a ToolEnvironment, with gates, caps and a forced answer."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from trajscope.engine.prompts import render_prompt
from trajscope.format import (
    Chunk,
    ErrorStep,
    FinalStep,
    ForcedAnswerStep,
    GateRejectionStep,
    ReadStep,
    SearchStep,
)

from ._actions import TRUNCATED, Action, ActionProtocol, ActionSpace, ParsedTurn
from ._base import EpisodeResult
from ._budget import ContextBudget, forced_end_reason, prompt_text
from ._gates import EvidenceState, Gate, GateDecision, first_rejection
from ._history import fit_history
from ._recorder import TrajectoryRecorder


@dataclass(frozen=True)
class LoopSettings:
    """Caps and interventions of one tool loop."""

    max_turns: int
    gates: Sequence[Gate] = ()
    correction_cap: int | None = None  # None: rejections are bounded by the turn cap only
    max_invalid_actions: int = 3
    forced_answer_prompt: str = "turn_cap_answer"
    # Summed prompt tokens that force the answer (engine.controllers._budget; None: no context budget).
    context_token_budget: int | None = None
    decoding: Mapping[str, Any] | None = None
    max_history_tokens: int | None = None


class ToolLoop:
    """Drives one model over one environment until an accepted final, a cap, or the budget."""

    def __init__(self, *, model: Any, environment: Any, protocol: ActionProtocol,
                 space: ActionSpace, recorder: TrajectoryRecorder, question: str,
                 corpus: Mapping[str, Chunk], settings: LoopSettings):
        self.model, self.env, self.protocol, self.space = model, environment, protocol, space
        self.recorder, self.question, self.corpus, self.settings = recorder, question, corpus, settings
        self.turns = 0
        self.rejections = 0
        self.invalid_actions = 0
        self.budget = ContextBudget(settings.context_token_budget, recorder.metadata)

    async def run(self, messages: list[dict[str, Any]]) -> EpisodeResult:
        """Loop until done; `messages` is the opening history (system prompt and question)."""
        history = list(messages)
        decoding = dict(self.settings.decoding or {})
        while (self.turns < self.settings.max_turns and not self.budget.exceeded
               and not getattr(self.env, "budget_exhausted", False)):
            shown = sorted(getattr(self.env, "visited_ids", ()) or ())
            fitted = fit_history(history, self.settings.max_history_tokens)
            completion = await self.model.complete(fitted, **self.protocol.request(self.space, shown), **decoding)
            self.turns += 1
            # The budget counts the context the model actually saw, as the endpoint measured it.
            self.budget.charge(prompt_text(fitted), completion)
            parsed = self.protocol.parse(completion, self.space, self.turns)
            answer, observations = self._act(parsed, completion)
            self._note_counters()
            if answer is not None:
                return answer, "final", None
            if any((a.problem or "").startswith(TRUNCATED) for a in parsed.actions):
                # The same request would be cut again: ask for the answer alone, with its shorter schema.
                self.recorder.metadata["forced_by"] = "truncated_reply"
                return await self._forced_answer(history, decoding, why="forced_answer")
            if self.invalid_actions > self.settings.max_invalid_actions:
                message = (f"gave up after {self.invalid_actions} invalid actions "
                           f"(cap {self.settings.max_invalid_actions})")
                return None, "error", message
            history.extend(self.protocol.messages(parsed, observations))
        return await self._forced_answer(history, decoding)

    def _act(self, parsed: ParsedTurn, completion: Any) -> tuple[str | None, list[str]]:
        observations: list[str] = []
        pending_completion = completion  # the reply's cost is charged to its first step
        for action in parsed.actions:
            thought = parsed.thought if pending_completion is not None else None
            if action.problem:
                observation = self._invalid(action, pending_completion, thought)
            elif action.name == "final":
                answer, observation = self._final(action, pending_completion, thought)
                if answer is not None:
                    return answer, observations
            else:
                observation = self._tool(action, pending_completion, thought)
            observations.append(observation)
            pending_completion = None
        return None, observations

    def _invalid(self, action: Action, completion: Any, thought: str | None) -> str:
        self.invalid_actions += 1
        observation = render_prompt("malformed_action", problem=action.problem,
                                    actions=", ".join(self.space.names))
        truncated = (action.problem or "").startswith(TRUNCATED)
        self.recorder.add(
            ErrorStep(error_type="truncated_reply" if truncated else "malformed_action", message=action.problem,
                      tool_name=action.name or None, args=action.arguments,
                      observation=observation, thought=thought),
            completion,
        )
        return observation

    def _final(self, action: Action, completion: Any, thought: str | None) -> tuple[str | None, str]:
        raw_answer = action.arguments.get("answer")
        answer = str(raw_answer).strip() if isinstance(raw_answer, (str, int, float)) else ""
        if not answer:
            return None, self._invalid(Action("final", action.arguments, action.call_id,
                                              "final needs a non-empty \"answer\""), completion, thought)
        # An environment's own review of a final comes first and is not capped (a fork's reject_final).
        decision = first_rejection(getattr(self.env, "final_reviews", ()), answer, self.evidence_state())
        cap = self.settings.correction_cap
        if decision is None and (cap is None or self.rejections < cap):
            decision = first_rejection(self.settings.gates, answer, self.evidence_state())
        if decision is not None:
            return None, self._reject(decision, answer, action, completion, thought)
        step = self.env.final(answer).step if hasattr(self.env, "final") else FinalStep(answer=answer)
        step.tool_name = step.tool_name or "final"
        step.args = step.args or dict(action.arguments)
        step.thought = step.thought or thought
        self.recorder.add(step, completion)
        return answer, ""

    def _reject(self, decision: GateDecision, answer: str, action: Action, completion: Any,
                thought: str | None) -> str:
        """Log a rejected final; its corrective observation is the reply to the agent."""
        self.rejections += 1
        self.recorder.add(
            GateRejectionStep(gate=decision.gate, rejected_answer=answer, reason=decision.reason,
                              tool_name="final", args=action.arguments,
                              observation=decision.observation, thought=thought),
            completion,
        )
        return decision.observation

    def _tool(self, action: Action, completion: Any, thought: str | None) -> str:
        result = self.env.call(action.name, action.arguments)
        step = result.step
        step.thought = step.thought or thought
        self.recorder.add(step, completion)
        if isinstance(step, ErrorStep):
            self.invalid_actions += 1
        for extra in getattr(result, "extra_steps", None) or ():
            self.recorder.add(extra)
        return result.text

    def evidence_state(self) -> EvidenceState:
        """Counters and texts the gates judge a `final` by."""
        read_texts: list[str] = []
        snippets: list[str] = []
        for step in self.recorder.steps:
            if isinstance(step, ReadStep):
                for p in step.passages:
                    chunk = self.corpus.get(p.chunk_id)
                    read_texts.append(p.text or (chunk.text if chunk else ""))
            elif isinstance(step, SearchStep):
                snippets.extend(c.snippet or "" for c in step.candidates)
        return EvidenceState(
            question=self.question,
            search_count=int(getattr(self.env, "search_count", 0)),
            read_count=int(getattr(self.env, "read_count", 0)),
            read_texts=read_texts,
            snippet_texts=snippets,
        )

    def _note_counters(self) -> None:
        meta = self.recorder.metadata
        meta["turns"] = self.turns
        meta["gate_rejections"] = self.rejections
        meta["invalid_actions"] = self.invalid_actions
        meta["search_count"] = int(getattr(self.env, "search_count", 0))
        meta["read_count"] = int(getattr(self.env, "read_count", 0))

    async def _forced_answer(self, history: list[dict[str, Any]], decoding: dict[str, Any],
                             why: str | None = None) -> EpisodeResult:
        why = why or forced_end_reason(self.budget)  # decided before the forced call adds its own prompt
        suffix, request = self.protocol.answer_request(self.space)
        prompt = render_prompt(self.settings.forced_answer_prompt, max_turns=self.settings.max_turns)
        prompt = f"{prompt}\n{suffix}" if suffix else prompt
        messages = fit_history(history + [{"role": "user", "content": prompt}],
                               self.settings.max_history_tokens)
        completion = await self.model.complete(messages, **request, **decoding)
        self.budget.charge(prompt_text(messages), completion)
        answer, problem = self.protocol.parse_answer(completion)
        self.recorder.add_answer(ForcedAnswerStep(answer=answer, observation=prompt), completion, problem)
        self._note_counters()
        self.recorder.metadata["forced_at_turn"] = self.turns
        return answer, why, None


