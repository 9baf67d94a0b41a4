"""How much of a question's entity list the passages an agent read actually mention."""
from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from trajscope.format import LOW_EVIDENCE_THRESHOLD, RecordError, loads_bounded, normalize_answer

_WORD_SEPARATORS = re.compile(r"[-‐‑–—/_]")
# "Obama's" and "Jesus'" name Obama and Jesus; dropped before punctuation removal would glue the s on.
_POSSESSIVE = re.compile(r"(?<=\w)['’]s\b|(?<=s)['’](?!\w)")
# Runs of single letters are initials: "J. R. R." and "J.R.R." both become "jrr".
_INITIALS = re.compile(r"\b(?:[a-z0-9] )+[a-z0-9]\b")


def normalize_entity(text: str) -> str:
    """SQuAD normalisation after dropping possessives and turning dashes and slashes into spaces
    ("Jean-Luc" ~ "Jean Luc", "Obama's" ~ "Obama"), with initials joined ("J. R. R." ~ "J.R.R.")."""
    normal = normalize_answer(_WORD_SEPARATORS.sub(" ", _POSSESSIVE.sub("", text)))
    return _INITIALS.sub(lambda m: m.group(0).replace(" ", ""), normal)


@dataclass(frozen=True)
class Coverage:
    """Entities found in the passages; coverage is None when the question has no entities."""

    n_entities: int
    n_covered: int
    missing: list[str]

    @property
    def coverage(self) -> float | None:
        return self.n_covered / self.n_entities if self.n_entities else None

    @property
    def low_evidence(self) -> bool:
        """Read-Gate's low-evidence test (the SQL macro is_low_evidence): coverage below the threshold."""
        return self.coverage is not None and self.coverage < LOW_EVIDENCE_THRESHOLD


# Keys of a JSON-encoded passage that name it rather than say anything (their values are no passage text).
_ID_KEYS = frozenset({"chunk_id", "doc_id", "document_id", "passage_id", "id", "_id", "docid", "pid", "score",
                      "rank", "url", "uri"})


def _strings(value: Any, key: str | None = None) -> Iterable[str]:
    if isinstance(value, str):
        if key not in _ID_KEYS:
            yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(v, k)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v, key)


def passage_text(text: str) -> str:
    """The words of a passage: a JSON-encoded one (a tool's `{"title": ..., "text": ...}`) is decoded and its
    text values joined by line breaks, so its spacing and punctuation cannot glue words together."""
    if text.lstrip()[:1] not in ("{", "["):
        return text
    try:
        value = loads_bounded(text, path="<passage>", line=1)
    except (json.JSONDecodeError, RecordError):
        return text
    return "\n".join(_strings(value)) if isinstance(value, (dict, list)) else text


def passage_haystack(texts: Iterable[str | None]) -> str:
    """All texts normalised and joined, padded so whole-word matches are `f" {needle} " in hay`."""
    return " " + " | ".join(normalize_entity(passage_text(t)) for t in texts if t) + " "


def mentions(haystack: str, phrase: str | None) -> bool:
    """Whether the normalised phrase occurs as whole words in a haystack from passage_haystack."""
    needle = normalize_entity(phrase or "")
    return bool(needle) and f" {needle} " in haystack


def entity_coverage(entities: list[str], haystack: str) -> Coverage:
    """Which entities occur as whole words in the haystack of read passages."""
    missing = [e for e in entities if not mentions(haystack, e)]
    return Coverage(len(entities), len(entities) - len(missing), missing)


__all__ = ["Coverage", "entity_coverage", "mentions", "normalize_entity", "passage_haystack", "passage_text"]
