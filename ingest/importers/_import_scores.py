"""Answer scores for an imported trajectory whose log carries a gold answer but no verdict of its own."""
from __future__ import annotations

import msgspec

from trajscope.format import SCORED_AT_IMPORT, Trajectory, has_gold_answer, score_answer

# The judges score_answer gives; a log that carries any of them keeps its own and gets none from the importer.
_ANSWER_JUDGES = frozenset({"em", "f1", "contain"})


def with_import_scores(trajectory: Trajectory) -> Trajectory:
    """The trajectory with em / f1 / contain of its final answer against its gold (marked SCORED_AT_IMPORT), so
    correctness is known at once; unchanged when it has no final answer or gold, or carries such a score."""
    question = trajectory.question
    if trajectory.final_answer is None or not has_gold_answer(question.gold_answer, question.aliases):
        return trajectory
    if any(j.judge in _ANSWER_JUDGES for j in trajectory.judgments):
        return trajectory
    scores = score_answer(trajectory.final_answer, question.gold_answer, list(question.aliases),
                          question=question.text)
    marked = [msgspec.structs.replace(j, rationale=SCORED_AT_IMPORT) for j in scores]
    return msgspec.structs.replace(trajectory, judgments=[*trajectory.judgments, *marked])


def is_import_score(judge_rationale: str | None) -> bool:
    """Whether a judgment is one with_import_scores added (not a verdict the log carried)."""
    return judge_rationale == SCORED_AT_IMPORT


__all__ = ["is_import_score", "with_import_scores"]
