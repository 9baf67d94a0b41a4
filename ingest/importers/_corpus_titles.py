"""Passages a log knows only by title (`title:<title>`) matched to a corpus's chunks, everywhere in a
trajectory (gold passages, search candidates, read passages), so gold reach compares like ids. The corpus
is the one `--corpus` names, else the one the target warehouse holds."""
from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import msgspec

from trajscope.format import Chunk, RecordError, Trajectory
from trajscope.ingest.datasets import DatasetError, GoldMatcher, GoldRef, load_dataset

_PREFIX = "title:"


class CorpusTitles:
    """A corpus whose unique titles name its chunks; the chunks are read on the first `title:` id met."""

    def __init__(self, name: str, chunks: Callable[[], Iterable[Chunk]], dataset: str | None = None):
        self.name = name  # how the import report names the corpus
        self.dataset = dataset  # given to every question (a named corpus); else the matched chunk's
        self._chunks = chunks
        self._matcher: GoldMatcher | None = None
        self._dataset_of: dict[str, str | None] = {}
        self.unmatched: set[str] = set()
        self.size: int | None = None  # chunks read (None: no title id met, the corpus was never read)

    @classmethod
    def named(cls, corpus: str) -> CorpusTitles:
        """`--corpus NAME|FILE`: a dataset name or file, loaded now (a bad name fails before any record)."""
        try:
            ds = load_dataset(corpus)
        except (DatasetError, OSError, ValueError) as exc:
            raise RecordError(str(corpus), 0, "corpus", f"cannot load corpus: {exc}") from None
        return cls(f"corpus {ds.name}", lambda: ds.chunks, ds.name)

    def _match(self, title: str) -> str | None:
        if self._matcher is None:
            chunks = list(self._chunks())
            self._matcher = GoldMatcher(chunks)
            self._dataset_of = {c.chunk_id: c.dataset for c in chunks}
            self.size = len(chunks)
        return self._matcher.match(GoldRef(title=title)).chunk_id

    def id_of(self, chunk_id: str) -> str:
        """The corpus chunk of a `title:` id (unique titles only), else the id unchanged."""
        if not chunk_id.startswith(_PREFIX):
            return chunk_id
        found = self._match(chunk_id[len(_PREFIX):])
        if found is None:
            self.unmatched.add(chunk_id[len(_PREFIX):])
        return found or chunk_id

    def apply(self, t: Trajectory) -> Trajectory:
        """The trajectory with every `title:` id it holds matched to the corpus, and the corpus's dataset."""
        q = t.question
        gold = [self.id_of(c) for c in q.gold_chunk_ids]
        if self.size == 0:  # a warehouse without a corpus: nothing to match, titles stay as they are
            return t
        matched = [c for c in gold if not c.startswith(_PREFIX)]
        dataset = q.dataset or self.dataset or next((self._dataset_of.get(c) for c in matched
                                                     if self._dataset_of.get(c)), None)
        question = msgspec.structs.replace(
            q, gold_chunk_ids=gold, dataset=dataset,
            gold_match=("unmatched" if q.gold_match == "title" and gold and not matched else q.gold_match))
        steps = []
        for s in t.steps:
            changes: dict[str, Any] = {}
            if candidates := getattr(s, "candidates", None):
                changes["candidates"] = [msgspec.structs.replace(c, chunk_id=self.id_of(c.chunk_id))
                                         for c in candidates]
            if chunk_ids := getattr(s, "chunk_ids", None):
                changes["chunk_ids"] = [self.id_of(c) for c in chunk_ids]
            if passages := getattr(s, "passages", None):
                changes["passages"] = [msgspec.structs.replace(p, chunk_id=self.id_of(p.chunk_id)) for p in passages]
            steps.append(msgspec.structs.replace(s, **changes) if changes else s)
        return msgspec.structs.replace(t, question=question, steps=steps)


def title_gold(t: Trajectory) -> bool:
    """Whether the question names its gold passages by title only, no corpus having been matched against
    (a corpus that matches none of them makes the question's gold_match `unmatched`, and says so itself)."""
    q = t.question
    return q.gold_match == "title" and bool(q.gold_chunk_ids) and all(c.startswith(_PREFIX) for c in q.gold_chunk_ids)
