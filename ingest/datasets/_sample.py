"""Deterministic question subsets that carry their own corpus, as HippoRAG builds its evaluation sets."""
from __future__ import annotations

import random

from ._dataset import Dataset, match_rate


def _fallback_distractors(ds: Dataset, keep: set[str], n: int, rng: random.Random) -> set[str]:
    # Without per-question contexts, keep the corpus-to-question ratio with a seeded random draw.
    target = round(len(ds.chunks) * n / max(len(ds.questions), 1))
    pool = [c.chunk_id for c in ds.chunks if c.chunk_id not in keep]
    extra = max(0, min(len(pool), target - len(keep)))
    return set(rng.sample(pool, extra))


def sample_dataset(ds: Dataset, n: int, seed: int) -> Dataset:
    """n questions drawn with `seed` (kept in source order) and the gold + distractor chunks of exactly those.

    Chunk ids are unchanged, so runs on a sample and on the full set refer to the same passages.
    Where the source has no per-question paragraphs, distractors are a seeded random draw that keeps
    the full set's chunks-per-question ratio.
    """
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    rng = random.Random(seed)
    n = min(n, len(ds.questions))
    picked = sorted(rng.sample(range(len(ds.questions)), n))
    questions = [ds.questions[i] for i in picked]
    keep: set[str] = set()
    has_contexts = False
    for q in questions:
        keep.update(q.gold_chunk_ids)
        if q.question_id in ds.contexts:
            has_contexts = True
            keep.update(ds.contexts[q.question_id])
    if not has_contexts:
        keep |= _fallback_distractors(ds, keep, n, rng)
    counts = {q.question_id: ds.gold_counts.get(q.question_id, (0, 0)) for q in questions}
    n_gold = sum(c[0] for c in counts.values())
    n_matched = sum(c[1] for c in counts.values())
    return Dataset(
        name=ds.name,
        questions=questions,
        chunks=[c for c in ds.chunks if c.chunk_id in keep],
        gold_match_rate=match_rate(n_matched, n_gold),
        n_gold=n_gold,
        n_gold_matched=n_matched,
        source=f"{ds.source} (sample n={n} seed={seed})",
        source_format=ds.source_format,
        contexts={q.question_id: ds.contexts[q.question_id] for q in questions if q.question_id in ds.contexts},
        gold_counts=counts,
    )
