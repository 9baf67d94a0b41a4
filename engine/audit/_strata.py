"""Choosing audit questions by B1 stratum, so a short audit fills both intervention tables."""
from __future__ import annotations

import random
from collections.abc import Sequence

from trajscope.format import Question

from ._interventions import gold_is_auditable, has_answer
from ._pipelines import raw_context
from ._runner import AuditDataset, _PassageSource
from ._spec import AuditSpec


def _gold_is_a_number(gold: str) -> bool:
    return any(ch.isdigit() for ch in gold)


def questions_by_b1_stratum(dataset: AuditDataset, spec: AuditSpec, per_stratum: int) -> list[str]:
    """Up to per_stratum question ids of each stratum, in the spec's seeded order (no model call).

    Kept: B1 holds the gold and the question itself names it (a faithful compile keeps it: 1->1, the
    remove / placebo table) and B1 misses a gold that is no number (a compile cannot surface it:
    0->0, the insertion table). Whether the compile really lands there is the audit's own finding.
    """
    source = _PassageSource(dataset, spec)
    order: Sequence[Question] = random.Random(spec.seed).sample(list(dataset.questions), len(dataset.questions))
    kept: dict[str, list[str]] = {"named_in_b1": [], "missing_from_b1": []}
    for question in order:
        gold = question.gold_answer or ""
        if not gold_is_auditable(gold):
            continue
        in_b1 = has_answer(raw_context(source.passages(question)), gold)
        if in_b1 and has_answer(question.text, gold):
            stratum = "named_in_b1"
        elif not in_b1 and not _gold_is_a_number(gold):
            stratum = "missing_from_b1"
        else:
            continue
        if len(kept[stratum]) < per_stratum:
            kept[stratum].append(question.question_id)
        if all(len(ids) == per_stratum for ids in kept.values()):
            break
    chosen = {qid for ids in kept.values() for qid in ids}
    return [q.question_id for q in dataset.questions if q.question_id in chosen]  # dataset order


__all__ = ["questions_by_b1_stratum"]
