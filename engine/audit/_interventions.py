"""The four controlled edits of a compiled context: remove, placebo, insert_prepend, insert_mid."""
from __future__ import annotations

import random
import re
from dataclasses import dataclass

from trajscope.format import MIN_GOLD_CHARS

from ._sentinels import MASK

PLACEBO_SEED = 1729
INTERVENTIONS = ("remove", "placebo", "insert_prepend", "insert_mid")

_WORD = re.compile(r"\S+")
# A sentence ends at . ! or ? (optionally closed by quotes or brackets) followed by whitespace,
# or at a line break; the boundary is where the next sentence starts.
_SENTENCE_END = re.compile(r"(?:(?<=[.!?])[\"'\u201d\u2019)\]]*\s+|\s*\n\s*)")

Span = tuple[int, int]


@dataclass(frozen=True)
class Edit:
    """An edited context: the new text, the replaced [start, end) ranges of the original and what went in."""

    intervention: str
    text: str
    spans: tuple[Span, ...]
    inserted: str

    @property
    def changed(self) -> bool:
        """False when the edit left the context as it was (nothing to remove)."""
        return bool(self.spans)


def gold_is_auditable(gold: str | None) -> bool:
    """Golds shorter than two characters are excluded from the audit (they match almost anywhere)."""
    return gold is not None and len(gold.strip()) >= MIN_GOLD_CHARS


def _gold_pattern(gold: str) -> re.Pattern[str]:
    text = gold.strip()
    if not text:
        raise ValueError("the gold answer is empty")
    return re.compile(re.escape(text), re.IGNORECASE)


def answer_spans(context: str, gold: str) -> list[Span]:
    """Every case-insensitive occurrence of the gold in the context, left to right, non-overlapping."""
    return [m.span() for m in _gold_pattern(gold).finditer(context)]


def has_answer(context: str | None, gold: str) -> bool:
    """True when the gold occurs in the context, ignoring case (ans_in_b1 / ans_in_compile)."""
    return bool(context) and _gold_pattern(gold).search(context) is not None  # type: ignore[arg-type]


def _replace_spans(text: str, spans: list[Span], replacement: str) -> str:
    pieces, last = [], 0
    for start, end in spans:
        pieces.append(text[last:start])
        pieces.append(replacement)
        last = end
    pieces.append(text[last:])
    return "".join(pieces)


def remove_answer(context: str, gold: str, sentinel: str = MASK) -> Edit:
    """Replace every case-insensitive match of the gold with the sentinel."""
    spans = answer_spans(context, gold)
    return Edit("remove", _replace_spans(context, spans, sentinel), tuple(spans), sentinel)


def gold_word_count(gold: str) -> int:
    """Words in the gold (whitespace-separated, at least one): the placebo span's length."""
    return max(1, len(gold.split()))


def placebo_candidates(context: str, gold: str) -> list[Span]:
    """Every run of as many consecutive words as the gold has that overlaps no answer occurrence."""
    answers = answer_spans(context, gold)
    words = [m.span() for m in _WORD.finditer(context)]
    k = gold_word_count(gold)
    spans = []
    for i in range(len(words) - k + 1):
        start, end = words[i][0], words[i + k - 1][1]
        if all(end <= a or start >= b for a, b in answers):
            spans.append((start, end))
    return spans


def placebo_span(context: str, gold: str, seed: int = PLACEBO_SEED) -> Span | None:
    """The random non-answer span the placebo replaces; a fresh RNG per context, so order never matters."""
    candidates = placebo_candidates(context, gold)
    if not candidates:
        return None
    return candidates[random.Random(seed).randrange(len(candidates))]


def placebo(context: str, gold: str, sentinel: str = MASK, seed: int = PLACEBO_SEED) -> Edit | None:
    """Replace one length-matched (same word count) random non-answer span; None when none exists."""
    span = placebo_span(context, gold, seed)
    if span is None:
        return None
    return Edit("placebo", _replace_spans(context, [span], sentinel), (span,), sentinel)


def insert_prepend(context: str, gold: str) -> Edit:
    """Prepend "Note: <gold>." to the context."""
    note = f"Note: {gold.strip()}."
    text = f"{note} {context}" if context else note
    return Edit("insert_prepend", text, ((0, 0),), note)


def sentence_boundaries(context: str) -> list[int]:
    """Offsets where a sentence other than the first starts."""
    stripped_end = len(context.rstrip())
    return [m.end() for m in _SENTENCE_END.finditer(context) if 0 < m.end() < stripped_end and m.start() > 0]


def midpoint_boundary(context: str) -> int | None:
    """The sentence boundary nearest the middle of the context (the earlier one on a tie)."""
    boundaries = sentence_boundaries(context)
    if not boundaries:
        return None
    middle = len(context) / 2
    return min(boundaries, key=lambda p: (abs(p - middle), p))


def insert_mid(context: str, gold: str) -> Edit:
    """Insert "<gold>." at the midpoint sentence boundary; at the end when the context is one sentence."""
    sentence = f"{gold.strip()}."
    position = midpoint_boundary(context)
    if position is None:
        position = len(context)
        sep = " " if context and not context[-1].isspace() else ""
        return Edit("insert_mid", context + sep + sentence, ((position, position),), sentence)
    text = context[:position] + sentence + " " + context[position:]
    return Edit("insert_mid", text, ((position, position),), sentence)


__all__ = [
    "INTERVENTIONS", "MIN_GOLD_CHARS", "PLACEBO_SEED", "Edit", "answer_spans", "gold_is_auditable",
    "gold_word_count", "has_answer", "insert_mid", "insert_prepend", "midpoint_boundary", "placebo",
    "placebo_candidates", "placebo_span", "remove_answer", "sentence_boundaries",
]
