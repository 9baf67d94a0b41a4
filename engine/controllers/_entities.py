"""A small regex named-entity extractor and the evidence-coverage measures the gates use."""
from __future__ import annotations

import re
from collections.abc import Iterable

# Capitalised runs, allowing short lowercase joiners inside a name ("Museum of Modern Art").
_NAME_RE = re.compile(
    r"[A-Z][\w'’.&-]*(?:\s+(?:(?:of|the|de|del|da|di|du|la|le|van|von)\s+)*[A-Z0-9][\w'’.&-]*)*"
)
_QUOTED_RE = re.compile(r"[\"“]([^\"”]{2,80})[\"”]")
_NUMBER_RE = re.compile(r"\b\d{3,4}\b")
_LEADING_STOP = {
    "what", "who", "whom", "whose", "which", "when", "where", "why", "how", "is", "are", "was",
    "were", "did", "does", "do", "in", "on", "at", "the", "a", "an", "of", "for", "from", "and",
    "or", "to", "by", "as", "with", "name", "has", "have", "had", "can", "could", "would", "will",
    "should", "this", "that", "these", "those", "it", "its", "if", "both", "between",
}
_POSSESSIVE_RE = re.compile(r"['’]s$")
_PUNCT_RE = re.compile(r"[^\w\s]")
_SPACE_RE = re.compile(r"\s+")


def normalize_text(text: str) -> str:
    """Lowercase, punctuation dropped, whitespace collapsed: the form coverage is matched in."""
    return _SPACE_RE.sub(" ", _PUNCT_RE.sub(" ", text.lower())).strip()


def _strip_leading_stopwords(name: str) -> str:
    words = name.split()
    while words and words[0].lower().strip(".'’") in _LEADING_STOP:
        words.pop(0)
    name = " ".join(words).strip(" .,'’")
    return _POSSESSIVE_RE.sub("", name)


def extract_entities(question: str) -> list[str]:
    """Named entities of a question: quoted titles, capitalised names, years; deduplicated."""
    found: list[str] = []
    for m in _QUOTED_RE.finditer(question):
        found.append(m.group(1).strip())
    for m in _NAME_RE.finditer(question):
        name = _strip_leading_stopwords(m.group(0))
        if name:
            found.append(name)
    found.extend(m.group(0) for m in _NUMBER_RE.finditer(question))
    seen: set[str] = set()
    unique = []
    for name in found:
        key = normalize_text(name)
        if key and key not in seen:
            seen.add(key)
            unique.append(name)
    return unique


def entity_coverage(entities: list[str], texts: Iterable[str]) -> tuple[float, list[str]]:
    """Share of entities that occur in the texts, and the missing ones; 1.0 when there are none."""
    if not entities:
        return 1.0, []
    haystack = " " + " ".join(normalize_text(t) for t in texts) + " "
    missing = [e for e in entities if f" {normalize_text(e)} " not in haystack]
    return 1.0 - len(missing) / len(entities), missing


def contains_phrase(texts: Iterable[str], phrase: str) -> bool:
    """Whether the normalised phrase occurs as whole words in any of the texts."""
    needle = normalize_text(phrase)
    if not needle:
        return False
    return any(f" {needle} " in f" {normalize_text(t)} " for t in texts)
