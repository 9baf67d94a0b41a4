"""Canonical dataset directories (write / read back) and deterministic sampling."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from trajscope.ingest.datasets import DatasetError, load_dataset, read_dataset, sample_dataset, write_dataset

FIX = Path(__file__).parent / "fixtures" / "datasets"


def test_write_then_load_returns_an_equal_dataset(tmp_path: Path) -> None:
    ds = load_dataset(FIX / "musique.jsonl")
    out = write_dataset(ds, tmp_path / "canon")
    assert sorted(p.name for p in out.iterdir()) == ["chunks.jsonl", "contexts.jsonl", "dataset.json",
                                                      "questions.jsonl"]
    meta = json.loads((out / "dataset.json").read_text())
    assert (meta["name"], meta["n_gold"], meta["n_gold_matched"], meta["gold_match_rate"]) == ("musique", 5, 5, 1.0)
    again = load_dataset(out)  # auto-detected as canonical
    assert again == ds


def test_canonical_errors_name_the_line_and_field(tmp_path: Path) -> None:
    out = write_dataset(load_dataset(FIX / "hotpotqa_list.json"), tmp_path / "canon")
    lines = (out / "questions.jsonl").read_text().splitlines()
    row = json.loads(lines[1])
    row["hop_count"] = "two"
    (out / "questions.jsonl").write_text(lines[0] + "\n" + json.dumps(row) + "\n")
    with pytest.raises(DatasetError) as err:
        read_dataset(out)
    assert (err.value.line, err.value.field) == (2, "hop_count")

    row["hop_count"] = 2
    row["gold_chunk_ids"] = ["hotpotqa:99"]
    (out / "questions.jsonl").write_text(lines[0] + "\n" + json.dumps(row) + "\n")
    with pytest.raises(DatasetError, match=r"questions\.jsonl:2: field gold_chunk_ids: gold chunk 'hotpotqa:99'"):
        read_dataset(out)


def test_sample_is_deterministic_and_carries_exactly_its_questions_paragraphs() -> None:
    ds = load_dataset(FIX / "musique.jsonl")
    one = sample_dataset(ds, 1, seed=3)
    assert one == sample_dataset(ds, 1, seed=3)
    (q,) = one.questions
    expected = set(ds.contexts[q.question_id]) | set(q.gold_chunk_ids)
    assert {c.chunk_id for c in one.chunks} == expected
    assert one.gold_counts == {q.question_id: ds.gold_counts[q.question_id]}
    assert one.n_gold == ds.gold_counts[q.question_id][0]


def test_sample_of_the_demo_set_changes_with_the_seed_and_keeps_source_order() -> None:
    ds = load_dataset("demo")
    a, b = sample_dataset(ds, 12, seed=1), sample_dataset(ds, 12, seed=2)
    assert [q.question_id for q in a.questions] == sorted(q.question_id for q in a.questions)
    assert [q.question_id for q in a.questions] != [q.question_id for q in b.questions]
    ids = {c.chunk_id for c in a.chunks}
    assert all(set(q.gold_chunk_ids) <= ids for q in a.questions)
    assert ids == set().union(*(ds.contexts[q.question_id] for q in a.questions))
    assert sample_dataset(ds, 1000, seed=1).questions == ds.questions


def test_sample_without_contexts_keeps_golds_and_the_corpus_ratio() -> None:
    ds = load_dataset(FIX / "2wiki_hipporag")  # questions + corpus, no per-question paragraphs
    one = sample_dataset(ds, 1, seed=0)
    (q,) = one.questions
    assert set(q.gold_chunk_ids) <= {c.chunk_id for c in one.chunks}
    assert len(one.chunks) == max(len(q.gold_chunk_ids), round(len(ds.chunks) * 1 / len(ds.questions)))
    with pytest.raises(ValueError, match="n must be at least 1"):
        sample_dataset(ds, 0, seed=0)
