"""Which questions a run covers: explicit ids, else a seeded sample kept in dataset order."""
from __future__ import annotations

import random
from collections.abc import Sequence

from trajscope.format import Question


def select_questions(questions: Sequence[Question], n: int | None, seed: int,
                     question_ids: Sequence[str] | None = None) -> list[Question]:
    """The same (dataset, n, seed) always gives the same ids, so conditions pair by construction."""
    if question_ids is not None:
        by_id = {q.question_id: q for q in questions}
        missing = [qid for qid in question_ids if qid not in by_id]
        if missing:
            raise ValueError(f"question ids not in the dataset: {', '.join(missing[:5])}"
                             + (f" (+{len(missing) - 5} more)" if len(missing) > 5 else ""))
        return [by_id[qid] for qid in question_ids]
    if n is None or n >= len(questions):
        return list(questions)
    chosen = set(random.Random(seed).sample(range(len(questions)), n))
    return [q for i, q in enumerate(questions) if i in chosen]
