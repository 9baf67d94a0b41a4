"""Answer judges: SQuAD EM / F1, Contain-Acc, an LLM equivalence judge and an abstention detector.

`is_abstention` ("gave up") is true for an empty answer, an answer that is exactly one of
`ABSTENTION_ANSWERS` ("unknown", "none", "n/a", ...), or one containing any of
`ABSTENTION_PHRASES` ("unable to find", "not found", "cannot be determined",
"insufficient information", ...). `judge_run` is the warehouse pass behind `trajscope judge`.
"""
from ._abstention import ABSTENTION_ANSWERS, ABSTENTION_PHRASES, is_abstention
from ._lexical import contain_match, exact_match, score_answer, token_f1
from ._llm_judge import PROMPT_NAME, VERDICT_SCHEMA, EquivalenceItem, LLMJudge, Verdict
from ._normalize import normalize_answer
from ._warehouse_pass import JudgeInput, JudgeReport, judge_run, read_judge_inputs, write_judge_results

__all__ = [
    "ABSTENTION_ANSWERS", "ABSTENTION_PHRASES", "PROMPT_NAME", "VERDICT_SCHEMA", "EquivalenceItem",
    "JudgeInput", "JudgeReport", "LLMJudge", "Verdict", "contain_match", "exact_match",
    "is_abstention", "judge_run", "normalize_answer", "read_judge_inputs", "score_answer",
    "token_f1", "write_judge_results",
]
