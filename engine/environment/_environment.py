"""The tool environment an agent acts in: one instance per trajectory, sharing a retriever."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from trajscope.engine.retrieval import Hit, Retriever
from trajscope.format import (
    Candidate,
    Chunk,
    ContextInjectionStep,
    ErrorStep,
    FinalStep,
    KeywordSearchStep,
    Passage,
    ReadStep,
    SearchStep,
    SemanticSearchStep,
    counts_as_read,
)

from ._arguments import ArgumentError, chunk_id_list, keyword_list, named_arguments, text_argument
from ._observations import duplicate_search, final_recorded, injected, passage, reread, search_results, unknown_chunk
from ._result import ToolResult
from ._tokens import estimate_tokens
from ._toolsets import TOOLSETS, Toolset, tool_schemas

_SEARCH_STEP = {"search": SearchStep, "keyword_search": KeywordSearchStep, "semantic_search": SemanticSearchStep}


def _component(retriever: Retriever, name: str) -> Retriever | None:
    """retriever itself when it is of kind name, else its part of that kind (a hybrid's bm25 / dense)."""
    if getattr(retriever, "name", None) == name:
        return retriever
    return getattr(retriever, name, None)


def normalised_query(tool: str, query: str) -> str:
    """Repeated-query cache key: sorted lowercased keywords for keyword_search, else lowercased
    whitespace-normalised text."""
    if tool == "keyword_search":
        return " ".join(sorted(query.lower().split()))
    return " ".join(query.lower().split())


class ToolEnvironment:
    """search / read / final (Read-Gate) or keyword_search / semantic_search / read_chunk / final (A-RAG).

    Every call counts one turn and returns a ToolResult; nothing raises on bad input. Once `max_turns`
    turns are used or the context estimate exceeds `context_token_budget`, `budget_exhausted` is set and
    every tool but final is refused. Context tokens are estimate_tokens() of each observation, plus
    whatever the controller adds with add_context_tokens(), raised to the prompt size the endpoint
    reports for each model call (saw_prompt()).
    """

    def __init__(
        self,
        corpus: Mapping[str, Chunk],
        retriever: Retriever,
        *,
        toolset: Toolset = "read_gate",
        top_k: int = 5,
        max_turns: int = 10,
        context_token_budget: int | None = None,
        inject_top_passage: bool = False,
        keyword_retriever: Retriever | None = None,
        semantic_retriever: Retriever | None = None,
    ):
        if toolset not in TOOLSETS:
            raise ValueError(f"unknown toolset {toolset!r}; choose one of {', '.join(TOOLSETS)}")
        self.corpus, self.toolset, self.top_k = corpus, toolset, top_k
        self.max_turns, self.context_token_budget = max_turns, context_token_budget
        self.inject_top_passage = inject_top_passage
        self._retrievers: dict[str, Retriever | None] = {
            "search": retriever,
            "keyword_search": keyword_retriever or _component(retriever, "bm25"),
            "semantic_search": semantic_retriever or _component(retriever, "dense"),
        }
        for tool in TOOLSETS[toolset]:
            if tool in self._retrievers and self._retrievers[tool] is None:
                raise ValueError(f"toolset {toolset!r} needs a retriever for {tool}: pass a hybrid retriever "
                                 f"or keyword_retriever / semantic_retriever")
        self.read_tool = "read_chunk" if toolset == "arag" else "read"
        self.search_count = 0
        self.read_count = 0
        self.duplicate_search_count = 0
        self.turns = 0
        self.context_tokens = 0
        self.visited_ids: set[str] = set()
        self.read_ids: set[str] = set()
        self.injected_ids: set[str] = set()
        self.finished = False
        self._first_read_turn: dict[str, int] = {}
        self._query_cache: dict[tuple[str, str], tuple[int, list[Candidate]]] = {}

    # --- state -------------------------------------------------------------------------------
    @property
    def tools(self) -> tuple[str, ...]:
        return TOOLSETS[self.toolset]

    @property
    def turn_cap_reached(self) -> bool:
        return self.turns >= self.max_turns

    @property
    def token_budget_exceeded(self) -> bool:
        return self.context_token_budget is not None and self.context_tokens > self.context_token_budget

    @property
    def budget_exhausted(self) -> bool:
        """True once the turn cap is reached or the context budget exceeded: only final is accepted."""
        return self.turn_cap_reached or self.token_budget_exceeded

    @property
    def turns_left(self) -> int:
        return max(0, self.max_turns - self.turns)

    def add_context_tokens(self, tokens: int) -> None:
        """Charge context the controller adds itself (prompts, model output) to the budget."""
        self.context_tokens += tokens

    def saw_prompt(self, prompt_tokens: int | None) -> None:
        """The model was just shown a prompt of this many tokens (the endpoint's count): the context
        it holds is at least that, whatever the estimate of the observations says."""
        if prompt_tokens is not None:
            self.context_tokens = max(self.context_tokens, int(prompt_tokens))

    def tool_schemas(self, protocol: Literal["tools", "json"] = "tools") -> list[dict[str, Any]]:
        """OpenAI tool definitions or the JSON Schema of an action object, for this toolset."""
        return tool_schemas(self.toolset, protocol)

    # --- tools -------------------------------------------------------------------------------
    def search(self, query: str) -> ToolResult:
        return self.call("search", {"query": query})

    def keyword_search(self, keywords: str | list[str]) -> ToolResult:
        return self.call("keyword_search", {"keywords": keywords})

    def semantic_search(self, query: str) -> ToolResult:
        return self.call("semantic_search", {"query": query})

    def read(self, chunk_ids: str | list[str]) -> ToolResult:
        return self.call(self.read_tool, {"chunk_id": chunk_ids})

    def final(self, answer: str) -> ToolResult:
        return self.call("final", {"answer": answer})

    def call(self, action: str, args: Any) -> ToolResult:
        """Run one action by name; an unknown action, bad arguments or a tool failure becomes an ErrorStep."""
        self.turns += 1
        turn = self.turns
        logged_args = dict(args) if isinstance(args, Mapping) else {"value": args}
        if not isinstance(action, str) or action not in self.tools:
            return self._error("unknown_action", action if isinstance(action, str) else None, logged_args,
                               f"Unknown action {action!r}. Available tools: {', '.join(self.tools)}.")
        if self.finished:
            return self._error("finished", action, logged_args, "The final answer was already given; no more tools.")
        if action != "final" and (turn > self.max_turns or self.token_budget_exceeded):
            return self._error("budget_exhausted", action, logged_args, self._budget_message())
        try:
            named = named_arguments(action, args)
            if action == "final":
                return self._final(text_argument(action, "answer", named["answer"]))
            if action == self.read_tool:
                return self._read(action, named, chunk_id_list(action, named["chunk_id"], self.corpus), turn)
            if action == "keyword_search":
                query = " ".join(keyword_list(action, named["keywords"]))
            else:
                query = text_argument(action, "query", named["query"])
            return self._search(action, named, query, turn)
        except ArgumentError as exc:
            return self._error("malformed_arguments", action, logged_args, str(exc))
        except Exception as exc:  # a retriever failure must reach the agent as an observation, not a crash
            return self._error("tool_error", action, logged_args, f"{action} failed: {type(exc).__name__}: {exc}")

    # --- implementations ---------------------------------------------------------------------
    def _search(self, tool: str, args: dict[str, Any], query: str, turn: int) -> ToolResult:
        self.search_count += 1
        step_type = _SEARCH_STEP[tool]
        key = (tool, normalised_query(tool, query))
        if key in self._query_cache:
            self.duplicate_search_count += 1
            first_turn, candidates = self._query_cache[key]
            text = duplicate_search(tool, query, first_turn, [c.chunk_id for c in candidates], self.read_tool)
            step = step_type(tool_name=tool, args=args, query=query, candidates=candidates, deduplicated=True,
                             observation=text)
            return self._result(step, text)
        retriever = self._retrievers[tool]
        assert retriever is not None  # checked in __init__ for every tool of the toolset
        candidates = [_candidate(h) for h in retriever.search(query, self.top_k)]
        self._query_cache[key] = (turn, candidates)
        self.visited_ids.update(c.chunk_id for c in candidates)
        titles = {c.chunk_id: self.corpus[c.chunk_id].title for c in candidates if c.chunk_id in self.corpus}
        text = search_results(tool, query, candidates, titles, self.read_tool)
        step = step_type(tool_name=tool, args=args, query=query, candidates=candidates, observation=text)
        extra = []
        if self.inject_top_passage and candidates and candidates[0].chunk_id in self.corpus:
            extra.append(self._injection(self.corpus[candidates[0].chunk_id]))
        return self._result(step, text, extra)

    def _injection(self, chunk: Chunk) -> ContextInjectionStep:
        is_new = chunk.chunk_id not in self.read_ids and chunk.chunk_id not in self.injected_ids
        self.injected_ids.add(chunk.chunk_id)
        return ContextInjectionStep(passages=[Passage(chunk_id=chunk.chunk_id, text=chunk.text, is_new=is_new)],
                                    observation=injected(chunk))

    def _read(self, tool: str, args: dict[str, Any], chunk_ids: list[str], turn: int) -> ToolResult:
        parts: list[str] = []
        passages: list[Passage] = []
        for chunk_id in chunk_ids:
            chunk = self.corpus.get(chunk_id)
            if chunk is None:
                parts.append(unknown_chunk(chunk_id))
            elif chunk_id in self.read_ids:
                passages.append(Passage(chunk_id=chunk_id, text=None, is_new=False))
                parts.append(reread(chunk_id, self._first_read_turn[chunk_id]))
            else:
                passages.append(Passage(chunk_id=chunk_id, text=chunk.text, is_new=True))
                parts.append(passage(chunk))
                self.read_ids.add(chunk_id)
                self.visited_ids.add(chunk_id)
                self._first_read_turn[chunk_id] = turn
        text = "\n\n".join(parts)
        step = ReadStep(tool_name=tool, args=args, chunk_ids=chunk_ids, passages=passages, observation=text)
        self.read_count += counts_as_read(step)
        return self._result(step, text)

    def _final(self, answer: str) -> ToolResult:
        self.finished = True
        text = final_recorded(answer)
        return self._result(FinalStep(tool_name="final", args={"answer": answer}, answer=answer, observation=text),
                            text)

    def _budget_message(self) -> str:
        why = (f"all {self.max_turns} turns are used" if self.turns > self.max_turns else
               f"the context estimate of {self.context_tokens} tokens exceeds the budget of "
               f"{self.context_token_budget}")
        return f"Budget exhausted ({why}): tools are disabled. Call final with your best answer now."

    def _error(self, error_type: str, tool: str | None, args: dict[str, Any], message: str) -> ToolResult:
        return self._result(ErrorStep(error_type=error_type, message=message, tool_name=tool, args=args,
                                      observation=message), message)

    def _result(self, step: Any, text: str, extra: list[Any] | None = None) -> ToolResult:
        extra = extra or []
        full = "\n\n".join([text] + [s.observation for s in extra])
        self.context_tokens += estimate_tokens(full)
        return ToolResult(step=step, text=full, extra_steps=extra)


def _candidate(hit: Hit) -> Candidate:
    return Candidate(chunk_id=hit.chunk_id, rank=hit.rank, score=hit.score, retriever=hit.retriever,
                     snippet=hit.snippet)
