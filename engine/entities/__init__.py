"""Named-entity extractors for the Read-Gate low-evidence gate and label (regex and spaCy) and coverage."""
from collections.abc import Callable

from trajscope.format import ENTITY_EXTRACTORS, GATE_EXTRACTOR, LOW_EVIDENCE_THRESHOLD

from ._coverage import Coverage, entity_coverage, mentions, normalize_entity, passage_haystack, passage_text
from ._regex import extract_regex_entities
from ._spacy import extract_spacy_entities, extract_spacy_entities_batch

EXTRACTORS: dict[str, Callable[[list[str]], list[list[str]]]] = {
    "regex": lambda texts: [extract_regex_entities(t) for t in texts],
    "spacy": extract_spacy_entities_batch,
}
if tuple(EXTRACTORS) != ENTITY_EXTRACTORS:
    raise ImportError(f"engine.entities implements {tuple(EXTRACTORS)}; trajscope.format lists {ENTITY_EXTRACTORS}")


def question_coverage(question: str, read_texts: list[str], extractor: str = GATE_EXTRACTOR) -> Coverage:
    """Coverage of one question's entities by the passages read: what the +lowev gate tests at run time."""
    return entity_coverage(EXTRACTORS[extractor]([question])[0], passage_haystack(read_texts))


__all__ = [
    "ENTITY_EXTRACTORS", "EXTRACTORS", "GATE_EXTRACTOR", "LOW_EVIDENCE_THRESHOLD", "Coverage", "entity_coverage",
    "extract_regex_entities", "extract_spacy_entities", "extract_spacy_entities_batch", "mentions",
    "normalize_entity", "passage_haystack", "passage_text", "question_coverage",
]
