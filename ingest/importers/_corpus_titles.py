"""`--corpus`: passages a log knows only by title (`title:<title>`) matched to a corpus's chunks, everywhere
in a trajectory (gold passages, search candidates, read passages), so gold reach compares like ids."""
from __future__ import annotations

from pathlib import Path

import msgspec

from ingest.datasets import DatasetError, GoldMatcher, GoldRef, load_dataset
from trajscope.format import RecordError, Trajectory

_PREFIX = "title:"


class CorpusTitles:
    """A corpus (a dataset name or file) whose unique titles name its chunks."""

    def __init__(self, corpus: str | Path):
        try:
            ds = load_dataset(corpus)
        except (DatasetError, OSError, ValueError) as exc:
            raise RecordError(str(corpus), 0, "corpus", f"cannot load corpus: {exc}") from None
        self.dataset = ds.name
        self._matcher = GoldMatcher(ds.chunks)
        self.unmatched: set[str] = set()

    def id_of(self, chunk_id: str) -> str:
        """The corpus chunk of a `title:` id (unique titles only), else the id unchanged."""
        if not chunk_id.startswith(_PREFIX):
            return chunk_id
        found = self._matcher.match(GoldRef(title=chunk_id[len(_PREFIX):])).chunk_id
        if found is None:
            self.unmatched.add(chunk_id[len(_PREFIX):])
        return found or chunk_id

    def apply(self, t: Trajectory) -> Trajectory:
        """The trajectory with every `title:` id it holds matched to the corpus, and the corpus's dataset."""
        q = t.question
        gold = [self.id_of(c) for c in q.gold_chunk_ids]
        matched = any(not c.startswith(_PREFIX) for c in gold)
        question = msgspec.structs.replace(
            q, gold_chunk_ids=gold, dataset=q.dataset or self.dataset,
            gold_match=("unmatched" if q.gold_match == "title" and gold and not matched else q.gold_match))
        steps = []
        for s in t.steps:
            changes = {}
            if getattr(s, "candidates", None):
                changes["candidates"] = [msgspec.structs.replace(c, chunk_id=self.id_of(c.chunk_id))
                                         for c in s.candidates]
            if getattr(s, "chunk_ids", None):
                changes["chunk_ids"] = [self.id_of(c) for c in s.chunk_ids]
            if getattr(s, "passages", None):
                changes["passages"] = [msgspec.structs.replace(p, chunk_id=self.id_of(p.chunk_id)) for p in s.passages]
            steps.append(msgspec.structs.replace(s, **changes) if changes else s)
        return msgspec.structs.replace(t, question=question, steps=steps)
