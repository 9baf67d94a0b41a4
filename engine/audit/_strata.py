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

    Kept: B1 opens with the gold's own passage (its title) and the question names the gold, so a
    compile that starts from the top passage keeps it (1->1: the remove / placebo table); and B1
    misses a gold that is no number (a compile cannot surface it: 0->0, the insertion table). Where
    the compile really lands is the audit's own finding, measured, not assumed.
    """
    source = _PassageSource(dataset, spec)
    order: Sequence[Question] = random.Random(spec.seed).sample(list(dataset.questions), len(dataset.questions))
    kept: dict[str, list[str]] = {"opens_with_gold": [], "missing_from_b1": []}
    for question in order:
        gold = question.gold_answer or ""
        if not gold_is_auditable(gold):
            continue
        passages = source.passages(question)
        if not passages:
            continue
        if has_answer(passages[0].title, gold) and has_answer(question.text, gold):
            stratum = "opens_with_gold"
        elif not has_answer(raw_context(passages), gold) and not _gold_is_a_number(gold):
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
