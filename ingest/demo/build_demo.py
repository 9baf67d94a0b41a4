"""Regenerate the bundled demo dataset: `python -m trajscope.ingest.demo.build_demo` (deterministic for its seed)."""
from __future__ import annotations

import random
from pathlib import Path

from trajscope.format import Chunk, Question
from trajscope.ingest.datasets import Dataset, write_dataset

from ._passages import (
    Passage,
    company_passage,
    festival_passage,
    person_passage,
    river_passage,
    town_passage,
)
from ._questions import DemoQuestion, QuestionMaker
from ._world import World, build_world

SEED = 20240611
NAME = "demo"
CONTEXT_SIZE = 10
# Beside the package modules, so setuptools package-data ("*.jsonl", "*.json") ships them.
DATA_DIR = Path(__file__).parent


def _entity_passages(world: World, rng: random.Random) -> dict[str, Passage]:
    passages = [person_passage(world, p, rng) for p in world.people.values()]
    passages += [company_passage(world, c, rng) for c in world.companies.values()]
    passages += [town_passage(world, t, rng) for t in world.towns.values()]
    passages += [river_passage(world, r, rng) for r in world.rivers.values()]
    passages += [festival_passage(world, t, rng) for t in list(world.towns.values())[:36]]
    return {p.title: p for p in passages}


def _decoys(world: World, title: str) -> list[str]:
    # Passages that share a gold passage's entities but lead elsewhere: namesakes and wrong bridges.
    out = [world.namesakes[title]] if title in world.namesakes else []
    if title in world.people:
        out.append(world.people[title].raised_in)
    if title in world.companies:
        out.append(world.companies[title].director)
    if title in world.towns:
        out.append(world.towns[title].neighbour)
    return out


def _contexts(world: World, questions: list[DemoQuestion], titles: list[str], rng: random.Random) -> None:
    for q in questions:
        chosen = [q.mention.title]
        for gold in q.gold_titles:
            chosen += [d for d in _decoys(world, gold) if d not in q.gold_titles]
        chosen = list(dict.fromkeys(chosen))[: CONTEXT_SIZE - len(q.gold_titles)]
        pool = [t for t in titles if t not in chosen and t not in q.gold_titles]
        chosen += rng.sample(pool, CONTEXT_SIZE - len(q.gold_titles) - len(chosen))
        q.distractor_titles = chosen


def build_dataset(seed: int = SEED) -> Dataset:
    """The demo Dataset, rebuilt from the seed."""
    world = build_world(seed)
    rng = random.Random(seed + 1)
    passages = _entity_passages(world, rng)
    questions = QuestionMaker(world, passages, rng).build()
    for q in questions:
        passages[q.mention.title] = q.mention
    titles = sorted(passages)
    rng.shuffle(titles)  # so a question's golds are not neighbours in id order
    ids = {t: f"{NAME}:{i}" for i, t in enumerate(titles)}
    _contexts(world, questions, titles, rng)
    chunks = [Chunk(chunk_id=ids[t], text=passages[t].text, dataset=NAME, title=t) for t in titles]
    canon = []
    contexts: dict[str, list[str]] = {}
    for i, q in enumerate(questions, start=1):
        qid = f"{NAME}-{i:03d}"
        canon.append(Question(
            question_id=qid, text=q.text, dataset=NAME, gold_answer=q.answer, aliases=q.aliases,
            question_type=q.question_type, hop_count=len(q.gold_titles),
            gold_chunk_ids=[ids[t] for t in q.gold_titles], gold_match="given",
            # The context's other passages are the question's own distractors, marked as the HotpotQA / 2Wiki /
            # MuSiQue loaders mark theirs (decoy_passages kind dataset_distractor).
            distractor_chunk_ids=[ids[t] for t in q.distractor_titles],
        ))
        contexts[qid] = [ids[t] for t in q.gold_titles + q.distractor_titles]
    n_gold = sum(len(q.gold_titles) for q in questions)
    return Dataset(
        name=NAME, questions=canon, chunks=chunks, gold_match_rate=1.0, n_gold=n_gold, n_gold_matched=n_gold,
        source=f"ingest/demo/build_demo.py seed={seed}", source_format="demo", contexts=contexts,
        gold_counts={q.question_id: (len(q.gold_chunk_ids), len(q.gold_chunk_ids)) for q in canon},
    )


def main() -> None:
    """Write the demo dataset next to this script."""
    ds = build_dataset()
    write_dataset(ds, DATA_DIR)
    hops = sorted({q.hop_count for q in ds.questions if q.hop_count})
    print(f"wrote {DATA_DIR}: {len(ds.questions)} questions ({'/'.join(map(str, hops))} hops), {len(ds.chunks)} chunks")


if __name__ == "__main__":
    main()
