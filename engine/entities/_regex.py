"""A regex named-entity extractor: quoted titles, capitalised name runs and years."""
from __future__ import annotations

import re

from ._coverage import normalize_entity

# Capitalised runs, allowing short lowercase joiners inside a name ("Museum of Modern Art");
# "and" and "in" are not, so "Ed Wood and Scott Derrickson" stays two names.
_NAME_RE = re.compile(
    r"[A-Z][\w'’.&-]*(?:\s+(?:(?:of|the|de|del|da|di|du|la|le|van|von|for)\s+)*[A-Z0-9][\w'’.&-]*)*"
)
_QUOTED_RE = re.compile(r"[\"“]([^\"”]{2,80})[\"”]")
_YEAR_RE = re.compile(r"\b\d{3,4}\b")
# Capitalised only because they open a question or sentence, not because they name something.
_LEADING_STOPWORDS = frozenset(
    "what who whom whose which when where why how is are was were did does do in on at the a an "
    "of for from and or to by as with name has have had can could would will should this that "
    "these those it its if both between".split()
)


def _strip_leading_stopwords(name: str) -> str:
    words = name.split()
    while words and words[0].lower().strip(".'’") in _LEADING_STOPWORDS:
        words.pop(0)
    return " ".join(words).strip(" .,'’")


def extract_regex_entities(text: str) -> list[str]:
    """Entities of a question in order of appearance, deduplicated by normalised form."""
    found = [m.group(1).strip() for m in _QUOTED_RE.finditer(text)]
    found += [_strip_leading_stopwords(m.group(0)) for m in _NAME_RE.finditer(text)]
    found += [m.group(0) for m in _YEAR_RE.finditer(text)]
    unique: dict[str, str] = {}
    for name in found:
        key = normalize_entity(name)
        if key and key not in unique:
            unique[key] = name
    return list(unique.values())


__all__ = ["extract_regex_entities"]
