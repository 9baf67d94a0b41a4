"""How much of a question's entity list the passages an agent read actually mention."""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from trajscope.format import normalize_answer

_WORD_SEPARATORS = re.compile(r"[-‐‑–—/_]")


def normalize_entity(text: str) -> str:
    """SQuAD normalisation after turning dashes and slashes into spaces ("Jean-Luc" ~ "Jean Luc")."""
    return normalize_answer(_WORD_SEPARATORS.sub(" ", text))


@dataclass(frozen=True)
class Coverage:
    """Entities found in the passages; coverage is None when the question has no entities."""

    n_entities: int
    n_covered: int
    missing: list[str]

    @property
    def coverage(self) -> float | None:
        return self.n_covered / self.n_entities if self.n_entities else None


def passage_haystack(texts: Iterable[str | None]) -> str:
    """All texts normalised and joined, padded so whole-word matches are `f" {needle} " in hay`."""
    return " " + " | ".join(normalize_entity(t) for t in texts if t) + " "


def mentions(haystack: str, phrase: str | None) -> bool:
    """Whether the normalised phrase occurs as whole words in a haystack from passage_haystack."""
    needle = normalize_entity(phrase or "")
    return bool(needle) and f" {needle} " in haystack


def entity_coverage(entities: list[str], haystack: str) -> Coverage:
    """Which entities occur as whole words in the haystack of read passages."""
    missing = [e for e in entities if not mentions(haystack, e)]
    return Coverage(len(entities), len(entities) - len(missing), missing)


__all__ = ["Coverage", "entity_coverage", "mentions", "normalize_entity", "passage_haystack"]
