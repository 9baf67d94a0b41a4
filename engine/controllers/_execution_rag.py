"""ExecutionRAG: a requirement register guiding a tool-using agent (default) or composing every query itself."""
from __future__ import annotations

import math
from typing import Any

from trajscope.engine.prompts import render_prompt
from trajscope.format import BudgetNudgeStep, Question, RegisterUpdateStep

from ._base import ControllerBase, EpisodeResult
from ._context import EpisodeContext
from ._recorder import TrajectoryRecorder
from ._register import ItemChange, compose_query, progress_delta, select_active
from ._register_agent import run_register_agent
from ._register_episode import RegisterEpisode

VARIANTS = ("agent", "composed")


class ExecutionRAGController(ControllerBase):
    """Seed retrieval and a model-written register; then either the tool-using agent the register guides
    (`agent`, the paper's system) or one controller-composed query per open item (`composed`, Algorithm 1)."""

    name = "execution_rag"
    description = ("ExecutionRAG requirement register (seed-grounded, iterative updates, invariants, "
                   "progress deltas, budget nudge, forced bounded answer) and its ablations")
    default_condition = "register"
    conditions = {
        "register": {},
        "composed": {"variant": "composed"},
        # The ablations run the same (agent) variant as `register`, so Tables 2 and 10 remove one component
        # of one system; the composed variant's ablations keep their own names.
        "question_only_init": {"seed_init": False},
        "no_updates": {"iterative_updates": False},
        "composed_question_only_init": {"variant": "composed", "seed_init": False},
        "composed_no_updates": {"variant": "composed", "iterative_updates": False},
    }
    defaults = {
        # agent: the model calls keyword_search / semantic_search / read_chunk itself, as A-RAG does.
        "variant": "agent",
        "seed_init": True,
        "iterative_updates": True,
        "max_loops": 15,
        "nudge_fraction": 0.8,
        "max_items": 5,
        "top_k": 5,
        "loop_search": "semantic_search",
        "fallback_search": "keyword_search",
        # App. B: a cumulative context of 128,000 tokens, counted over what the model was shown
        # (every prompt's input tokens), not over search results it never saw.
        "context_token_budget": 128_000,
        # App. B: structured JSON calls at temperature 0; the answer uses the model's default
        # sampling (None leaves the run's setting); at most 16,384 output tokens per call.
        "structured_temperature": 0.0,
        "temperature": None,
        "max_output_tokens": 16_384,
        "max_passage_chars": None,
        "max_context_notes": 6,
        "max_answer_passages": 8,
        "protocol": None,
        # agent variant only, matched with A-RAG
        "max_invalid_actions": 3,
        "max_history_tokens": None,
    }

    def check_params(self, params: dict[str, Any]) -> None:
        if params["variant"] not in VARIANTS:
            raise ValueError(f"variant must be one of: {', '.join(VARIANTS)}")
        tools = ("semantic_search", "keyword_search")
        if params["loop_search"] not in tools or params["fallback_search"] not in (*tools, None):
            raise ValueError("loop_search must be semantic_search or keyword_search "
                             "(fallback_search: either, or None)")
        if int(params["max_loops"]) < 1 or int(params["max_items"]) < 1:
            raise ValueError("max_loops and max_items must be at least 1")

    async def episode(self, question: Question, ctx: EpisodeContext, recorder: TrajectoryRecorder,
                      params: dict[str, Any]) -> EpisodeResult:
        recorder.metadata["variant"] = params["variant"]
        if params["variant"] == "agent":
            # The seed's search and read, then the agent's own calls: the same budget as A-RAG's.
            return await run_register_agent(RegisterEpisode(question, ctx, recorder, params,
                                                            env_turns=params["max_loops"] + 2))
        state = RegisterEpisode(question, ctx, recorder, params)
        recorder.metadata["protocol"] = state.protocol.name
        await state.initialise()
        if not params["iterative_updates"]:
            return await self._static(state)
        budget = params["max_loops"]
        nudge_at = max(1, math.ceil(params["nudge_fraction"] * budget))
        for loop in range(1, budget + 1):
            if state.register.is_clear:
                recorder.metadata["loops"] = loop - 1
                return await state.answer(forced=False)
            if state.context_budget_exceeded:
                break
            item, selection = select_active(state.register, state.stalled)
            assert item is not None  # an open item exists when the register is not clear
            if selection:
                index = recorder.add(RegisterUpdateStep(phase="select", args={"item_id": item.item_id},
                                                        observation=f"{item.item_id} is the search target"))
                state.log_changes(selection, index)
            query = compose_query(question.text, item)
            changes = await self._retrieve_and_update(state, item.item_id, query)
            delta = progress_delta(changes, state.register)
            if delta is not None:
                text = render_prompt("progress_delta", changes=delta[0], open=delta[1])
                recorder.add(RegisterUpdateStep(phase="progress_delta", args={"loop": loop}, observation=text))
                state.notes.append(text)
            if loop >= nudge_at:  # Algorithm 1 line 22: every loop from 0.8·B on
                text = render_prompt("budget_nudge", used=loop, budget=budget)
                recorder.add(BudgetNudgeStep(message=text, observation=text, args={"loop": loop}))
                state.notes.append(text)
        recorder.metadata["loops"] = budget
        return await state.answer(forced=not state.register.is_clear)

    async def _retrieve_and_update(self, state: RegisterEpisode, item_id: str, query: str) -> list[ItemChange]:
        """R(u_t) then U: the fallback tool is tried when the main one brings nothing new for this query."""
        tools = [state.params["loop_search"]]
        fallback = state.params["fallback_search"]
        if fallback and fallback != tools[0]:
            tools.append(fallback)
        exhausted = state.exhausted_tools.setdefault(item_id, [])
        tool = next((t for t in tools if t not in exhausted), tools[0])
        new_ids = state.retrieve(tool, query)
        if not new_ids:
            if tool not in exhausted:
                exhausted.append(tool)
            if len(exhausted) >= len(tools):
                state.stalled.add(item_id)
            return []
        changes = await state.update(item_id, query, new_ids)
        for change in changes:
            if change.note_changed:  # a new note composes a new query
                state.stalled.discard(change.item_id)
                state.exhausted_tools.pop(change.item_id, None)
        return changes

    async def _static(self, state: RegisterEpisode) -> EpisodeResult:
        """No iterative updates: search once per initial item, then answer from what was found."""
        items = list(state.register.items.values())[: state.params["max_loops"]]
        for item in items:
            state.retrieve(state.params["loop_search"], compose_query(state.question.text, item))
        state.recorder.metadata["loops"] = len(items)
        return await state.answer(forced=False)
