"""What a controller may use during one episode: the EpisodeContext protocol that engine.runs fulfils.

It lives with the controllers, which only read it, so engine.runs (which builds the concrete
context and calls the controllers) depends on engine.controllers and never the other way round.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from trajscope.format import Chunk, Run

if TYPE_CHECKING:  # for annotations only: the environment pulls in the retrieval stack
    from trajscope.engine.environment import ToolEnvironment
    from trajscope.engine.llm import ChatModel
    from trajscope.engine.retrieval import Retriever


class EpisodeContext(Protocol):
    """Shared, read-only resources of one episode; `make_environment(**overrides)` builds a fresh
    ToolEnvironment (overrides such as toolset="arag" or max_turns=15 go to its constructor)."""

    # Properties: a controller reads these and never rebinds them, so an implementation may be frozen.
    @property
    def model(self) -> ChatModel: ...
    @property
    def run(self) -> Run: ...
    @property
    def make_environment(self) -> Callable[..., ToolEnvironment]: ...
    @property
    def retriever(self) -> Retriever: ...
    @property
    def corpus(self) -> Mapping[str, Chunk]: ...
    @property
    def params(self) -> Mapping[str, Any]: ...


__all__ = ["EpisodeContext"]
