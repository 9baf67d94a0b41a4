"""Acceptance on the real data in ../shared/data: HotpotQA (100) and 2WikiMultiHopQA (1,000 over 6,119)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from trajscope.ingest.datasets import load_dataset, sample_dataset

DATA = Path("../shared/data")
HOTPOT = DATA / "hotpotqa" / "hotpotqa_distractor_dev_100.json"
TWOWIKI = DATA / "2wikimultihopqa"

pytestmark = pytest.mark.skipif(not DATA.is_dir(), reason="real data ../shared/data is not present on this machine")


def test_hotpotqa_100_loads_with_every_supporting_title_matched() -> None:
    raw = json.loads(HOTPOT.read_text())
    ds = load_dataset(HOTPOT)
    assert len(ds.questions) == 100
    chunks = ds.chunk_map()
    for record, question in zip(raw, ds.questions, strict=False):
        assert question.question_id == record["id"]
        gold_titles = list(dict.fromkeys(record["supporting_facts"]["title"]))
        assert [chunks[c].title for c in question.gold_chunk_ids] == gold_titles
        assert question.gold_match == "title" and question.hop_count == len(gold_titles)
    assert ds.n_gold == ds.n_gold_matched == sum(len(set(r["supporting_facts"]["title"])) for r in raw)
    assert ds.gold_match_rate == 1.0
    distinct = {(t, "".join(s)) for r in raw
                for t, s in zip(r["context"]["title"], r["context"]["sentences"], strict=False)}
    assert len(ds.chunks) == len(distinct)  # distractor paragraphs that repeat are one chunk


def test_2wiki_1000_over_6119_passages_match_rate_equals_an_independent_count() -> None:
    questions = json.loads((TWOWIKI / "questions_1000.json").read_text())
    corpus = json.loads((TWOWIKI / "corpus_6119.json").read_text())
    titles = {p["title"] for p in corpus}
    n_gold = n_hit = 0
    for q in questions:
        subjects = list(dict.fromkeys(e[0] for e in q["evidence"]))
        n_gold += len(subjects)
        n_hit += sum(s in titles for s in subjects)
    ds = load_dataset(TWOWIKI)
    assert (len(ds.questions), len(ds.chunks)) == (1000, 6119)
    assert (ds.n_gold, ds.n_gold_matched) == (n_gold, n_hit)
    assert ds.gold_match_rate == pytest.approx(n_hit / n_gold)
    fully = sum(len(q.gold_chunk_ids) == q.hop_count for q in ds.questions)
    assert fully == 761  # the data README: all evidence subjects are titles for 761 of 1,000


def test_2wiki_sample_is_deterministic() -> None:
    ds = load_dataset(TWOWIKI)
    a, b = sample_dataset(ds, 50, seed=7), sample_dataset(ds, 50, seed=7)
    assert a == b and len(a.questions) == 50
    assert all(set(q.gold_chunk_ids) <= {c.chunk_id for c in a.chunks} for q in a.questions)
