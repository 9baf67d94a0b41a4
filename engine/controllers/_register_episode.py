"""One ExecutionRAG episode's state: environment, register, exposed evidence, agent context, model calls."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from trajscope.engine.prompts import load_prompt, render_prompt
from trajscope.format import (
    Chunk,
    FinalStep,
    ForcedAnswerStep,
    Question,
    RegisterEvent,
    RegisterUpdateStep,
    SearchStep,
)

from ._actions import ActionProtocol, parse_json_object
from ._base import EpisodeResult, decoding_overrides, open_environment, output_limit, resolve_protocol
from ._budget import ContextBudget, forced_end_reason
from ._context import EpisodeContext
from ._recorder import TrajectoryRecorder
from ._register import (
    STATUSES,
    ItemChange,
    Register,
    apply_update,
    initial_changes,
    parse_sub_questions,
    parse_update,
)

# Length caps keep a small model from pasting whole passages into the register and running out of tokens.
SUB_QUESTION_CHARS = 150
NOTE_CHARS = 200


def _text(max_chars: int) -> dict[str, Any]:
    return {"type": "string", "maxLength": max_chars}


def init_schema(max_items: int) -> dict[str, Any]:
    """JSON Schema of the initialisation reply."""
    return {
        "type": "object",
        "properties": {"items": {
            "type": "array", "minItems": 1, "maxItems": max_items,
            "items": {"type": "object", "properties": {"sub_question": _text(SUB_QUESTION_CHARS)},
                      "required": ["sub_question"]},
        }},
        "required": ["items"],
    }


def update_schema(item_ids: list[str], chunk_ids: list[str]) -> dict[str, Any]:
    """JSON Schema of an update reply; ids are enumerated so a constrained decoder cannot invent any."""
    id_schema = {"type": "string", "enum": item_ids} if item_ids else {"type": "string"}
    chunk_schema = {"type": "string", "enum": chunk_ids} if chunk_ids else {"type": "string"}
    return {
        "type": "object",
        "properties": {
            "updates": {"type": "array", "items": {
                "type": "object",
                "properties": {
                    "id": id_schema,
                    "status": {"type": "string", "enum": list(STATUSES)},
                    "note": _text(NOTE_CHARS),
                    "supporting_chunk_ids": {"type": "array", "items": chunk_schema},
                    "reason": _text(NOTE_CHARS),
                },
                "required": ["id", "status"],
            }},
            "new_items": {"type": "array", "items": {
                "type": "object", "properties": {"sub_question": _text(SUB_QUESTION_CHARS)},
                "required": ["sub_question"],
            }},
        },
        "required": ["updates"],
    }


class RegisterEpisode:
    """The state of one ExecutionRAG episode; the controller drives it loop by loop."""

    def __init__(self, question: Question, ctx: EpisodeContext, recorder: TrajectoryRecorder, params: dict[str, Any],
                 *, env_turns: int | None = None):
        self.question, self.ctx, self.recorder, self.params = question, ctx, recorder, params
        self.corpus: Mapping[str, Chunk] = ctx.corpus
        # Composed variant: two environment turns per loop (search, read) plus the seed's. The context
        # budget is kept here, over the prompts the model saw, not by the environment.
        turns = env_turns if env_turns is not None else 2 * params["max_loops"] + 2
        self.env = open_environment(ctx, toolset="arag", max_turns=turns,
                                    top_k=params["top_k"], context_token_budget=None)
        # One definition of context spent for every controller (engine.controllers._budget).
        self.budget = ContextBudget(params["context_token_budget"], recorder.metadata)
        self.protocol: ActionProtocol = resolve_protocol(ctx, params)
        self.exposed: list[str] = []
        self.notes: list[str] = []  # progress deltas and nudges injected into the agent context
        self.register = Register()
        self.stalled: set[str] = set()  # items whose current query brought nothing new with any tool
        self.exhausted_tools: dict[str, list[str]] = {}  # item -> tools its current query drew nothing from

    # -- model calls --------------------------------------------------------------------------------
    @property
    def context_budget_exceeded(self) -> bool:
        return self.budget.exceeded

    @property
    def context_tokens_seen(self) -> int:
        return self.budget.spent

    def charge(self, prompt: str, completion: Any) -> None:
        """Add one call's prompt tokens to the cumulative context the model saw."""
        self.budget.charge(prompt, completion)

    async def structured(self, prompt: str, schema: dict[str, Any]) -> tuple[Any, dict[str, Any] | None, str | None]:
        completion = await self.ctx.model.complete(
            [{"role": "user", "content": prompt}], response_schema=schema,
            **decoding_overrides(self.params, "structured_temperature"), **output_limit(self.ctx, self.params),
        )
        self.charge(prompt, completion)
        value, problem = parse_json_object(completion.text)
        return completion, value, problem

    # -- evidence -----------------------------------------------------------------------------------
    def passages_text(self, chunk_ids: list[str], shown: dict[str, Any] | None = None) -> str:
        """The passages as the register's prompts show them; `shown` gets the ids and characters of the
        full texts shown (args shown_chunk_ids / shown_chars: ER §4.7 counts them as retrieved tokens)."""
        limit = self.params["max_passage_chars"]
        lines, ids, chars = [], [], []
        for chunk_id in chunk_ids:
            chunk = self.corpus.get(chunk_id)
            if chunk is None:
                continue
            text = chunk.text if limit is None or len(chunk.text) <= limit else chunk.text[:limit] + "…"
            lines.append(f"[{chunk_id}]" + (f" {chunk.title}:" if chunk.title else "") + f" {text}")
            ids.append(chunk_id)
            chars.append(len(text))
        if shown is not None:
            shown.update(shown_chunk_ids=ids, shown_chars=chars)
        return "\n".join(lines) or "(none)"

    def context_text(self) -> str:
        return "\n".join(self.notes[-self.params["max_context_notes"]:])

    def retrieve(self, tool: str, query: str) -> list[str]:
        """Run one search; read and expose the chunks not shown before (ΔC_t); returns them."""
        args = {"keywords": query} if tool == "keyword_search" else {"query": query}
        result = self.env.call(tool, args)
        self.recorder.add(result.step)
        for extra in result.extra_steps:
            self.recorder.add(extra)
        if not isinstance(result.step, SearchStep) or result.step.deduplicated:
            return []
        seen = set(self.exposed)
        new_ids = [c.chunk_id for c in result.step.candidates if c.chunk_id not in seen]
        if new_ids:
            self.recorder.add(self.env.read(new_ids).step)
            self.exposed.extend(new_ids)
        return new_ids

    def expose(self, chunk_ids: list[str]) -> list[str]:
        """Mark chunks the agent's own tool calls brought as shown; returns those never shown before (ΔC_t)."""
        seen = set(self.exposed)
        new_ids = [c for c in dict.fromkeys(chunk_ids) if c not in seen and c in self.corpus]
        self.exposed.extend(new_ids)
        return new_ids

    # -- register -----------------------------------------------------------------------------------
    def log_changes(self, changes: list[ItemChange], step_index: int) -> None:
        for c in changes:
            self.recorder.register_events.append(RegisterEvent(
                item_id=c.item_id, step_index=step_index, sub_question=c.sub_question,
                from_status=c.from_status, to_status=c.to_status, note=c.note or None, reason=c.reason,
                supporting_chunk_ids=list(c.supporting_chunk_ids),
            ))

    async def initialise(self) -> None:
        """Seed retrieval (unless question-only) and the model's initial register S_0."""
        max_items = self.params["max_items"]
        shown: dict[str, Any] = {}
        if self.params["seed_init"]:
            seed_ids = self.retrieve("semantic_search", self.question.text)
            prompt = render_prompt("register_init", question=self.question.text, max_items=max_items,
                                   evidence=self.passages_text(seed_ids, shown))
        else:
            prompt = render_prompt("register_init_question_only", question=self.question.text,
                                   max_items=max_items)
        completion, value, problem = await self.structured(prompt, init_schema(max_items))
        items, problems = parse_sub_questions(value, max_items) if value is not None else ([], [problem or ""])
        if not items:
            # Without a usable register the question itself is the one requirement.
            self.recorder.add_error("malformed_register_init", "; ".join(problems), completion)
            completion, items = None, [self.question.text]
        self.register = Register.initial(items)
        index = self.recorder.add(RegisterUpdateStep(
            phase="init", args={"seed_init": self.params["seed_init"], "problems": problems, **shown},
            observation=render_prompt("register_state", register=self.register.render()),
        ), completion)
        self.log_changes(initial_changes(self.register), index)

    async def update(self, item_id: str, query: str, new_ids: list[str]) -> list[ItemChange]:
        """U(S_{t-1}, ΔC_t) by the model, then the invariants; returns the applied changes."""
        shown: dict[str, Any] = {}
        prompt = render_prompt("register_update", question=self.question.text, register=self.register.render(),
                               context=self.context_text(), evidence=self.passages_text(new_ids, shown))
        schema = update_schema(list(self.register.items), list(self.exposed))
        completion, value, problem = await self.structured(prompt, schema)
        if value is None:
            self.recorder.add_error("malformed_register_update", problem or "no update", completion, args=shown)
            return []
        proposals, new_items, problems = parse_update(value)
        outcome = apply_update(self.register, proposals, new_items, known_chunk_ids=set(self.exposed),
                               max_items=2 * self.params["max_items"])
        self.register = outcome.register
        index = self.recorder.add(RegisterUpdateStep(
            phase="update",
            args={"item_id": item_id, "query": query, "violations": outcome.violations, "problems": problems,
                  **shown},
            observation=self.register.render(),
        ), completion)
        self.log_changes(outcome.changes, index)
        self.recorder.metadata["invariant_violations"] = (
            self.recorder.metadata.get("invariant_violations", 0) + len(outcome.violations))
        return outcome.changes

    # -- answers ------------------------------------------------------------------------------------
    async def answer(self, *, forced: bool, agent_answer: str | None = None) -> EpisodeResult:
        """G(q, S): from the register and its supporting passages; bounded when forced at the budget.
        `agent_answer`: what the tool-using agent replied when it chose to stop, kept in the step's args."""
        why = forced_end_reason(self.budget)  # before the answer call adds its own prompt
        limit = self.params["max_answer_passages"]
        evidence = (self.register.supporting_chunk_ids() or self.exposed[-limit:])[:limit]
        shown: dict[str, Any] = {}
        fields = dict(question=self.question.text, register=self.register.render(),
                      context=self.context_text(), evidence=self.passages_text(evidence, shown))
        if forced:
            prompt = render_prompt("register_forced_answer", force=load_prompt("force_final_answer"), **fields)
        else:
            prompt = render_prompt("register_answer", **fields)
        suffix, request = self.protocol.answer_request()
        prompt = f"{prompt}\n{suffix}" if suffix else prompt
        completion = await self.ctx.model.complete([{"role": "user", "content": prompt}], **request,
                                                   **decoding_overrides(self.params),
                                                   **output_limit(self.ctx, self.params))
        self.charge(prompt, completion)
        answer, problem = self.protocol.parse_answer(completion)
        if forced:
            self.recorder.add_answer(ForcedAnswerStep(answer=answer, observation=load_prompt("force_final_answer"),
                                                      args=shown), completion, problem)
            return answer, why, None
        args: dict[str, Any] = {"answer": answer, **shown}
        if agent_answer is not None:
            args["agent_answer"] = agent_answer
        self.recorder.add_answer(FinalStep(tool_name="final", args=args, answer=answer), completion, problem)
        return answer, "final", None
