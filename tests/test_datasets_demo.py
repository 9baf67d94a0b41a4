"""Invariants of the bundled demo set, and that the committed files are what build_demo.py writes."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

from trajscope.format import Candidate, FinalStep, Passage, ReadStep, Run, SearchStep, Trajectory
from trajscope.ingest.datasets import read_dataset, write_dataset
from trajscope.ingest.demo import DEMO_DIR, SNIPPET_CHARS, load_demo
from trajscope.ingest.demo.build_demo import build_dataset
from trajscope.warehouse import ingest_trajectories, load_chunks, open_readonly


def test_demo_shape_and_integrity() -> None:
    ds = load_demo()
    assert ds.name == "demo" and 55 <= len(ds.questions) <= 65 and 280 <= len(ds.chunks) <= 320
    ids = [c.chunk_id for c in ds.chunks]
    assert len(set(ids)) == len(ids)
    assert len({q.question_id for q in ds.questions}) == len(ds.questions)
    assert len({c.title for c in ds.chunks}) == len(ds.chunks)
    shapes = Counter((q.question_type, q.hop_count) for q in ds.questions)
    assert {t for t, _ in shapes} == {"bridge", "comparison"} and {h for _, h in shapes} == {2, 3, 4}
    for q in ds.questions:
        assert set(q.gold_chunk_ids) <= set(ids)
        assert q.hop_count == len(q.gold_chunk_ids) == len(set(q.gold_chunk_ids))  # one gold passage per hop
        assert q.gold_answer and q.gold_match == "given"
        assert set(q.gold_chunk_ids) <= set(ds.contexts[q.question_id]) and len(ds.contexts[q.question_id]) == 10
    assert ds.gold_match_rate == 1.0 and ds.n_gold == sum(q.hop_count for q in ds.questions)


def test_bridge_answers_sit_deep_in_the_last_gold_passage_not_in_any_snippet() -> None:
    ds = load_demo()
    chunks = ds.chunk_map()
    for q in (q for q in ds.questions if q.question_type == "bridge"):
        last = chunks[q.gold_chunk_ids[-1]].text
        assert q.gold_answer in last, q.question_id
        for gold in q.gold_chunk_ids:
            head = chunks[gold].text[:SNIPPET_CHARS]
            assert not any(a in head for a in [q.gold_answer, *q.aliases]), q.question_id


def test_demo_has_near_namesake_distractors_in_context() -> None:
    ds = load_demo()
    chunks = ds.chunk_map()
    with_namesake = 0
    for q in ds.questions:
        golds = {chunks[g].title for g in q.gold_chunk_ids}
        others = {chunks[c].title for c in ds.contexts[q.question_id]} - golds
        # a one-letter variant of a gold title (Brennick / Brannick) sits among the distractors
        with_namesake += any(len(a) == len(b) and sum(x != y for x, y in zip(a, b, strict=False)) == 1
                             for a in golds for b in others)
    assert with_namesake >= len(ds.questions) // 2


def test_committed_demo_files_are_reproduced_by_the_build_script(tmp_path: Path) -> None:
    write_dataset(build_dataset(), tmp_path)
    for name in ("questions.jsonl", "chunks.jsonl", "contexts.jsonl", "dataset.json"):
        assert (tmp_path / name).read_bytes() == (DEMO_DIR / name).read_bytes(), name
    assert read_dataset(tmp_path) == load_demo()


def test_demo_questions_mark_their_context_distractors() -> None:
    # As the HotpotQA / 2Wiki / MuSiQue loaders do: the context's non-gold passages are the question's distractors.
    ds = load_demo()
    for q in ds.questions:
        context = ds.contexts[q.question_id]
        assert q.distractor_chunk_ids == [c for c in context if c not in q.gold_chunk_ids], q.question_id
        assert len(q.distractor_chunk_ids) == len(context) - q.hop_count > 0


def test_demo_distractors_are_dataset_decoys_of_a_demo_run(tmp_path: Path) -> None:
    ds = load_demo()
    q = ds.questions[0]
    distractor = q.distractor_chunk_ids[0]
    run = Run(run_id="demo-run", dataset=ds.name)
    steps = [SearchStep(query=q.text, candidates=[Candidate(chunk_id=distractor, rank=1)]),
             ReadStep(chunk_ids=[distractor], passages=[Passage(chunk_id=distractor, text="t")]),
             FinalStep(answer="none")]
    db = tmp_path / "w.duckdb"
    ingest_trajectories(db, [Trajectory(trajectory_id="demo-run::1", run=run, question=q, steps=steps,
                                        final_answer="none", end_reason="final")])
    load_chunks(db, ds.chunks, ds.name)
    with open_readonly(db) as con:
        marked = con.execute("SELECT decoy_chunk_id FROM decoy_passages WHERE kind = 'dataset_distractor' "
                             "AND question_id = ? ORDER BY decoy_chunk_id", [q.question_id]).fetchall()
        met = con.execute("SELECT decoy_chunk_id, decoy_kind, read_step, best_rank FROM trajectory_decoys").fetchall()
    assert [c for c, in marked] == sorted(q.distractor_chunk_ids)
    assert (distractor, "dataset_distractor", 1, 1) in met
