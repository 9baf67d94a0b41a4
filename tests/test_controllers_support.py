"""Shared fixtures of the controller tests: a tiny corpus, a keyword retriever, a mock-backed context.

Holds no tests itself; the test_controllers_* modules import it.
"""
from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from trajscope.engine.environment import ToolEnvironment
from trajscope.engine.llm import ChatModel, ModelConfig
from trajscope.engine.mock_llm import MockLLMServer
from trajscope.engine.retrieval import Hit, make_snippet
from trajscope.engine.runs import EpisodeResources
from trajscope.format import Chunk, ModelSettings, Question, Run, Trajectory

CHUNKS = [
    Chunk(chunk_id="c1", title="The North Star",
          text="The North Star was an abolitionist newspaper founded and published by Frederick Douglass in 1847."),
    Chunk(chunk_id="c2", title="Frederick Douglass",
          text="Frederick Douglass married Helen Pitts in 1884, after the death of his first wife Anna Murray."),
    Chunk(chunk_id="c3", title="William Cooper Nell",
          text="William Cooper Nell wrote articles for The North Star and married Frances Ames."),
    Chunk(chunk_id="c4", title="Helen Pitts Douglass",
          text="Helen Pitts Douglass was an American suffragist and the second wife of the publisher."),
    Chunk(chunk_id="c5", title="Rochester",
          text="Rochester, New York, was where the newspaper was printed."),
    Chunk(chunk_id="c6", title="Anna Murray Douglass",
          text="Anna Murray Douglass was an abolitionist and the first wife of the orator."),
    Chunk(chunk_id="c7", title="Liberator",
          text="The Liberator was an abolitionist newspaper published by William Lloyd Garrison."),
]
CORPUS = {c.chunk_id: c for c in CHUNKS}
QUESTION = Question(question_id="q1", text="Who married the publisher of abolitionist newspaper The North Star?",
                    gold_answer="Helen Pitts Douglass")
_WORD = re.compile(r"[a-z0-9]+")
_STOP = {"the", "of", "a", "an", "who", "what", "was", "and", "in", "by", "for", "to", "is"}


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP}


class KeywordRetriever:
    """Deterministic stand-in retriever: ranks chunks by shared distinct words, ties in corpus order."""

    name = "keyword"
    top_k = 5

    def __init__(self, chunks: list[Chunk]):
        self.chunks = chunks

    @property
    def chunk_ids(self) -> list[str]:
        return [c.chunk_id for c in self.chunks]

    def search(self, query: str, k: int | None = None) -> list[Hit]:
        query_words = _words(query)
        scored = [(len(query_words & _words(f"{c.title} {c.text}")), i, c) for i, c in enumerate(self.chunks)]
        ranked = sorted((s for s in scored if s[0] > 0), key=lambda s: (-s[0], s[1]))[: k or self.top_k]
        return [Hit(c.chunk_id, rank, float(score), self.name, make_snippet(c.text))
                for rank, (score, _, c) in enumerate(ranked, start=1)]

    def search_batch(self, queries: list[str], k: int | None = None) -> list[list[Hit]]:
        return [self.search(q, k) for q in queries]


RETRIEVER = KeywordRetriever(CHUNKS)


class RoutedRetriever:
    """Stand-in retriever whose results a test scripts: `route(query)` gives the chunk ids, in rank order."""

    name = "routed"
    top_k = 5

    def __init__(self, corpus: dict[str, Chunk], route: Callable[[str], list[str]]):
        self.corpus, self.route = corpus, route
        self.queries: list[str] = []

    @property
    def chunk_ids(self) -> list[str]:
        return list(self.corpus)

    def search(self, query: str, k: int | None = None) -> list[Hit]:
        self.queries.append(query)
        ids = self.route(query)[: k or self.top_k]
        return [Hit(i, rank, 1.0 / rank, self.name, make_snippet(self.corpus[i].text))
                for rank, i in enumerate(ids, start=1)]

    def search_batch(self, queries: list[str], k: int | None = None) -> list[list[Hit]]:
        return [self.search(q, k) for q in queries]


def environment_factory(corpus: dict[str, Chunk], retriever: Any) -> Callable[..., ToolEnvironment]:
    """What the orchestrator's factory does, with one stand-in retriever behind every search tool."""

    def make(**options: Any) -> ToolEnvironment:
        return ToolEnvironment(corpus, retriever, keyword_retriever=retriever, semantic_retriever=retriever,
                               **options)

    return make


@contextmanager
def mock_server(responder: Callable[..., Any] | None = None) -> Iterator[MockLLMServer]:
    """A started mock server, stopped afterwards."""
    server = MockLLMServer(responder).start()
    try:
        yield server
    finally:
        server.stop()


def run_controller(controller: Any, server: MockLLMServer, *, protocol: str = "tools",
                   question: Question = QUESTION, prices: dict[str, tuple[float, float]] | None = None,
                   params: dict[str, Any] | None = None, retriever: Any = RETRIEVER,
                   corpus: dict[str, Chunk] | None = None, temperature: float | None = 0.0,
                   run_id: str = "test-run", dataset: str | None = None) -> Trajectory:
    """Run one episode of `controller` against the mock server; returns its trajectory."""
    config = ModelConfig(name="mock", base_url=server.base_url, api_key="mock-key", protocol=protocol,  # type: ignore[arg-type]
                         max_retries=0, timeout_s=10.0, prices=prices or {"mock": (0.0, 0.0)},
                         temperature=temperature)
    run = Run(run_id=run_id, dataset=dataset, controller=controller.name, condition=controller.condition,
              model="mock", model_settings=ModelSettings(protocol=protocol))  # type: ignore[arg-type]

    async def episode() -> Trajectory:
        async with ChatModel(config) as model:
            chunks = corpus if corpus is not None else CORPUS
            ctx = EpisodeResources(model=model, run=run, make_environment=environment_factory(chunks, retriever),
                                   retriever=retriever, corpus=chunks, params=params or {})
            return await controller.run(question, ctx)

    return asyncio.run(episode())


def kinds(trajectory: Trajectory) -> list[str]:
    """The `kind` of every step, in order."""
    return [type(s).__struct_config__.tag for s in trajectory.steps]
