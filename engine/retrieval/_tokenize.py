"""The one tokeniser BM25 uses for passages and queries (and the parity test feeds rank-bm25)."""
from __future__ import annotations

import re

TOKENIZER_VERSION = "lower-word-stopwords-1"

_WORD = re.compile(r"\w+", re.UNICODE)

# A short English stop list: function words only, so that entity names and numbers survive.
STOPWORDS = frozenset(
    """a an and are as at be been but by did do does for from had has have he her his how i if in
    into is it its of on or she that the their them they this to was were what when where which who
    whom whose why will with you""".split()
)


def tokenize(text: str) -> list[str]:
    """Lowercase word tokens (letters, digits, underscore) without stop words."""
    return [t for t in _WORD.findall(text.lower()) if t not in STOPWORDS]
