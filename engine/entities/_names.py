"""Clean-up shared by every entity extractor: leading stopwords, titles, possessives, duplicates, nesting."""
from __future__ import annotations

import re
from collections.abc import Iterable

from ._coverage import normalize_entity

# Capitalised only because they open a question or sentence, not because they name something.
_LEADING_STOPWORDS = frozenset(
    "what who whom whose which when where why how is are was were did does do in on at the a an "
    "of for from and or to by as with name has have had can could would will should this that "
    "these those it its if both between".split()
)
# Honorifics and offices a passage usually leaves out ("President Lincoln" is "Abraham Lincoln" there).
_TITLES = frozenset(
    "mr mrs ms miss dr prof professor sir dame lord lady rev reverend president senator governor "
    "general captain".split()
)
_TRAILING_POSSESSIVE = re.compile(r"['’]s?$")


def strip_name(name: str) -> str:
    """A name without leading stopwords and titles, trailing punctuation or a trailing possessive."""
    words = name.split()
    while words and words[0].lower().strip(".'’") in _LEADING_STOPWORDS:
        words.pop(0)
    while len(words) > 1 and words[0].lower().strip(".") in _TITLES:
        words.pop(0)
    stripped = " ".join(words).strip(" .,")
    return _TRAILING_POSSESSIVE.sub("", stripped) if stripped.endswith(("'s", "’s", "s'", "s’")) else stripped


def unique_outermost(names: Iterable[str]) -> list[str]:
    """Names in order, each once by normalised form, without those nested inside a longer name
    ("Harry Potter" inside "Harry Potter and the Goblet of Fire" is counted once, as the title)."""
    unique: dict[str, str] = {}
    for name in names:
        key = normalize_entity(name)
        if key and key not in unique:
            unique[key] = name
    keys = list(unique)
    return [unique[k] for k in keys if not any(k != other and f" {k} " in f" {other} " for other in keys)]


__all__ = ["strip_name", "unique_outermost"]
