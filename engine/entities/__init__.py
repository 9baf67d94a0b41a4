"""Named-entity extractors for the Read-Gate low-evidence test (regex and spaCy) and coverage."""
from collections.abc import Callable

from ._coverage import Coverage, entity_coverage, mentions, normalize_entity, passage_haystack
from ._regex import extract_regex_entities
from ._spacy import extract_spacy_entities, extract_spacy_entities_batch

# Below this share of question entities found in read passages a final is "low-evidence".
LOW_EVIDENCE_THRESHOLD = 0.8

EXTRACTORS: dict[str, Callable[[list[str]], list[list[str]]]] = {
    "regex": lambda texts: [extract_regex_entities(t) for t in texts],
    "spacy": extract_spacy_entities_batch,
}

__all__ = [
    "EXTRACTORS", "LOW_EVIDENCE_THRESHOLD", "Coverage", "entity_coverage", "extract_regex_entities",
    "extract_spacy_entities", "extract_spacy_entities_batch", "mentions", "normalize_entity",
    "passage_haystack",
]
