"""A shard of a run: every count-th question of the run's selection, logged to a file of its own."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Shard:
    """Shard `index` (0-based) of `count`: questions index, index + count, ... of the seeded selection."""

    index: int
    count: int

    def __post_init__(self) -> None:
        if self.count < 1 or not 0 <= self.index < self.count:
            raise ValueError(f"shard {self.index} of {self.count}: expected 0 <= index < count")

    def pick(self, selected: Sequence[T]) -> list[T]:
        """This shard's part of the selection (round robin, so shards differ in size by one at most)."""
        return list(selected[self.index::self.count])

    def log_name(self, run_id: str) -> str:
        """`<run_id>.shard-002-of-004.jsonl` (1-based in the name, as people count)."""
        return f"{run_id}.shard-{self.index + 1:03d}-of-{self.count:03d}.jsonl"
