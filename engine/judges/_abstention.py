"""Detects an explicit abstention ("gave up") in a final answer, for the ExecutionRAG taxonomy."""
from __future__ import annotations

import re

# Phrases that say the agent declined to answer, matched anywhere in the lower-cased answer on
# word boundaries (ExecutionRAG Appendix E: "unable to find", "not found", ...).
ABSTENTION_PHRASES: tuple[str, ...] = (
    "i don't know",
    "i do not know",
    "cannot be determined",
    "can't be determined",
    "could not be determined",
    "cannot determine",
    "can't determine",
    "unable to determine",
    "unable to find",
    "unable to answer",
    "unable to identify",
    "cannot answer",
    "can't answer",
    "cannot be answered",
    "cannot be found",
    "could not find",
    "couldn't find",
    "could not be found",
    "insufficient information",
    "insufficient evidence",
    "not enough information",
    "not enough evidence",
    "no information",
    "not found",
    "not mentioned",
    "not specified",
    "not provided",
    "no answer",
)

# Short words that abstain only when they are the whole answer: "Unknown Pleasures" is an album.
ABSTENTION_ANSWERS: tuple[str, ...] = ("unknown", "none", "n/a", "na", "not available", "unanswerable")

_PHRASE_RE = re.compile(r"(?<!\w)(?:" + "|".join(re.escape(p) for p in ABSTENTION_PHRASES) + r")(?!\w)")


def is_abstention(answer: str | None) -> bool:
    """True when the answer is empty, is a bare abstention word, or contains a give-up phrase."""
    if answer is None or not answer.strip():
        return True
    text = answer.lower().replace("\u2019", "'").strip()
    if text.rstrip(".!").strip() in ABSTENTION_ANSWERS:
        return True
    return _PHRASE_RE.search(text) is not None


__all__ = ["ABSTENTION_ANSWERS", "ABSTENTION_PHRASES", "is_abstention"]
