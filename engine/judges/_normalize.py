"""SQuAD answer normalisation: lower case, strip punctuation, articles and extra whitespace."""
from __future__ import annotations

import re
import string

_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_PUNCTUATION = frozenset(string.punctuation)


def normalize_answer(text: str | None) -> str:
    """The official SQuAD v1.1 normalisation; None becomes the empty string."""
    if not text:
        return ""
    lowered = text.lower()
    no_punct = "".join(ch for ch in lowered if ch not in _PUNCTUATION)
    no_articles = _ARTICLES.sub(" ", no_punct)
    return " ".join(no_articles.split())


__all__ = ["normalize_answer"]
