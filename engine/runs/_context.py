"""The controller interface the orchestrator calls, and the resources each episode is handed."""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from trajscope.engine.controllers import EpisodeContext
from trajscope.engine.llm import ChatModel
from trajscope.format import Chunk, Question, Run, Trajectory

if TYPE_CHECKING:  # for annotations only: the environment pulls in the retrieval stack
    from trajscope.engine.environment import ToolEnvironment
    from trajscope.engine.retrieval import Retriever


@runtime_checkable
class Controller(Protocol):
    """An agent policy: turns one question into one trajectory."""

    @property
    def name(self) -> str: ...

    async def run(self, question: Question, ctx: EpisodeContext) -> Trajectory: ...


@dataclass
class EpisodeResources:
    """The run's EpisodeContext (engine.controllers): shared, read-only resources for one episode.
    `make_environment(**overrides)` builds a fresh ToolEnvironment."""

    model: ChatModel
    run: Run
    make_environment: Callable[..., ToolEnvironment]
    retriever: Retriever
    corpus: Mapping[str, Chunk]
    params: dict[str, Any] = field(default_factory=dict)


__all__ = ["Controller", "EpisodeResources"]
