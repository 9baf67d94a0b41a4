"""What every retriever returns and the interface every retriever offers."""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from trajscope.format import RetrieverSettings

from ._corpus import IndexedCorpus

DEFAULT_SNIPPET_CHARS = 200


@dataclass(frozen=True, slots=True)
class Hit:
    """One ranked search result: rank is 1-based; snippet is the start of the passage text."""

    chunk_id: str
    rank: int
    score: float
    retriever: str
    snippet: str


def make_snippet(text: str, max_chars: int = DEFAULT_SNIPPET_CHARS) -> str:
    """The first ~max_chars characters of text, cut at a word boundary, with '...' when cut."""
    flat = " ".join(text.split())
    if len(flat) <= max_chars:
        return flat
    cut = flat[:max_chars]
    space = cut.rfind(" ")
    # Cutting mid-word would hand the agent a misleading fragment; back off unless the word is huge.
    if space >= max_chars * 0.6:
        cut = cut[:space]
    return cut.rstrip() + "..."


def hits_at(corpus: IndexedCorpus, rows: Iterable[int], scores: Iterable[float], retriever: str,
            snippet_chars: int = DEFAULT_SNIPPET_CHARS) -> list[Hit]:
    """Hits for ranked corpus rows, best first; snippets are built only here, for the hits returned."""
    hits: list[Hit] = []
    for row, score in zip(rows, scores, strict=False):
        chunk = corpus.chunks[row]
        snippet = make_snippet(chunk.text, snippet_chars)
        hits.append(Hit(chunk.chunk_id, len(hits) + 1, float(score), retriever, snippet))
    return hits


@runtime_checkable
class Retriever(Protocol):
    """A ranked retriever over a fixed corpus of chunks."""

    name: str
    top_k: int

    @property
    def chunk_ids(self) -> list[str]: ...

    def search(self, query: str, k: int | None = None) -> list[Hit]: ...

    def search_batch(self, queries: list[str], k: int | None = None) -> list[list[Hit]]: ...

    def settings(self) -> RetrieverSettings: ...
