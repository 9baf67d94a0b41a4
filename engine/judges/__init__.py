"""Answer judges: SQuAD EM / F1, Contain-Acc, an LLM equivalence judge and an abstention detector.

`is_abstention` ("gave up") is true for an empty answer, an answer that is exactly one of
`ABSTENTION_ANSWERS` ("unknown", "none", "n/a", ...), or one containing any of
`ABSTENTION_PHRASES` ("unable to find", "not found", "cannot be determined",
"insufficient information", ...).
"""
from ._abstention import ABSTENTION_ANSWERS, ABSTENTION_PHRASES, is_abstention
from ._lexical import contain_match, exact_match, score_answer, token_f1
from ._normalize import normalize_answer

__all__ = [
    "ABSTENTION_ANSWERS",
    "ABSTENTION_PHRASES",
    "contain_match",
    "exact_match",
    "is_abstention",
    "normalize_answer",
    "score_answer",
    "token_f1",
]
