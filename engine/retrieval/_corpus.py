"""The corpus as a retriever sees it: ordered chunks, their indexed text and a content hash."""
from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from trajscope.format import Chunk

# Bumped whenever indexed_text changes, so caches built from the old text are not reused.
INDEXED_TEXT_VERSION = "title-newline-text-1"


def indexed_text(chunk: Chunk) -> str:
    """Title and text together: both BM25 and the encoder see the title."""
    return f"{chunk.title}\n{chunk.text}" if chunk.title else chunk.text


@dataclass(frozen=True)
class IndexedCorpus:
    """Chunks in index order with an id -> position map and a hash of their content."""

    chunks: tuple[Chunk, ...]
    position: dict[str, int]
    content_hash: str

    @property
    def chunk_ids(self) -> list[str]:
        return [c.chunk_id for c in self.chunks]

    def __len__(self) -> int:
        return len(self.chunks)


def index_corpus(chunks: Iterable[Chunk] | Mapping[str, Chunk]) -> IndexedCorpus:
    """Freeze the chunks in order; duplicate chunk ids are an error."""
    items = tuple(chunks.values()) if isinstance(chunks, Mapping) else tuple(chunks)
    if not items:
        raise ValueError("cannot index an empty corpus")
    position: dict[str, int] = {}
    digest = hashlib.sha256(INDEXED_TEXT_VERSION.encode())
    for i, chunk in enumerate(items):
        if chunk.chunk_id in position:
            raise ValueError(f"duplicate chunk_id {chunk.chunk_id!r} at positions {position[chunk.chunk_id]} and {i}")
        position[chunk.chunk_id] = i
        for part in (chunk.chunk_id, chunk.title or "", chunk.text):
            digest.update(part.encode())
            digest.update(b"\x1f")
        digest.update(b"\x1e")
    return IndexedCorpus(items, position, digest.hexdigest())


def as_indexed(chunks: IndexedCorpus | Iterable[Chunk] | Mapping[str, Chunk]) -> IndexedCorpus:
    """Accept an already indexed corpus unchanged, index anything else."""
    return chunks if isinstance(chunks, IndexedCorpus) else index_corpus(chunks)
