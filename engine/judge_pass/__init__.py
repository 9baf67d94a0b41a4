"""The judging pass behind `trajscope judge`: reads a run from the warehouse, scores it, writes back.

It combines the pure scorers (`trajscope.format` lexical scores, `engine.judges`, `engine.entities`)
with the warehouse, so neither of those packages needs the other or the warehouse.
"""
from ._pass import (
    LEXICAL_JUDGES,
    JudgeInput,
    JudgeReport,
    answer_missing,
    judge_run,
)

__all__ = ["LEXICAL_JUDGES", "JudgeInput", "JudgeReport", "answer_missing", "judge_run"]
