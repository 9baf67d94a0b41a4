"""Answer judges: SQuAD EM / F1, Contain-Acc, an LLM equivalence judge and an abstention detector.

The lexical scores are defined once in `trajscope.format` (the warehouse uses them too) and
re-exported here. `is_abstention` ("gave up") is true for an empty answer, an answer that is
exactly one of `ABSTENTION_ANSWERS` ("unknown", "none", "n/a", ...), or one containing any of
`ABSTENTION_PHRASES` ("unable to find", "not found", "cannot be determined",
"insufficient information", ...). The warehouse pass behind `trajscope judge` is `engine.judge_pass`.
"""
from trajscope.format import contain_match, exact_match, normalize_answer, score_answer, token_f1

from ._abstention import ABSTENTION_ANSWERS, ABSTENTION_PHRASES, is_abstention
from ._llm_judge import PROMPT_NAME, VERDICT_SCHEMA, EquivalenceItem, LLMJudge, Verdict

__all__ = [
    "ABSTENTION_ANSWERS", "ABSTENTION_PHRASES", "PROMPT_NAME", "VERDICT_SCHEMA", "EquivalenceItem",
    "LLMJudge", "Verdict", "contain_match", "exact_match", "is_abstention", "normalize_answer",
    "score_answer", "token_f1",
]
