"""The controller interface the orchestrator calls, and what each episode is handed."""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from trajscope.format import Chunk, Question, Run, Trajectory

from engine.llm import ChatModel


@runtime_checkable
class Controller(Protocol):
    """An agent policy: turns one question into one trajectory."""

    name: str

    async def run(self, question: Question, ctx: EpisodeContext) -> Trajectory: ...


@dataclass
class EpisodeContext:
    """Shared, read-only resources for one episode. `make_environment(**overrides)` builds a fresh
    ToolEnvironment (overrides such as toolset="arag" or max_turns=15 go to its constructor)."""

    model: ChatModel
    run: Run
    make_environment: Callable[..., Any]
    retriever: Any
    corpus: Mapping[str, Chunk]
    params: dict[str, Any] = field(default_factory=dict)
