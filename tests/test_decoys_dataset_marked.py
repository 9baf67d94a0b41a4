"""Distractors a dataset marks (HotpotQA / 2Wiki context paragraphs no supporting fact names, MuSiQue
is_supporting false) are decoys beside near-namesakes, each row saying which kind; every label known by hand."""
from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
from funnel_records import CHUNKS, DATASET, DECOY, H1, H2, OTHER, _read, _search, _traj, question

from trajscope.format import Candidate, FinalStep, Question, SearchStep, Trajectory
from trajscope.ingest.datasets import load_dataset
from trajscope.warehouse import ingest_trajectories, load_chunks, load_questions, open_readonly

FIX = Path(__file__).parent / "fixtures" / "datasets"


def _rows(db: Path, sql: str) -> list[dict]:
    with open_readonly(db) as con:
        cur = con.execute(sql)
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]


def _marked() -> Question:
    """The fixture's 2-hop question, its source marking Xanten (OTHER) and Lothair III (DECOY) as distractors."""
    return msgspec.structs.replace(question(), distractor_chunk_ids=[OTHER, DECOY])


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("marked") / "w.duckdb"
    q = _marked()
    read_both = [_search("Lothair II", H1), _read(H1), _search("Ermengarde of Tours", H2), _read(H2)]
    ingest_trajectories(path, [
        # Every hop read, then the marked distractor Xanten, and its river as the answer (steps 4, 5; final 6).
        _traj("read_distractor", [*read_both, _search("Xanten", OTHER), _read(OTHER), FinalStep(answer="Rhine")],
              "Rhine", q=q),
        # Xanten listed at rank 2 beside hop 1 at step 0, never read.
        _traj("listed_distractor", [_search("Lothair II", H1, OTHER), _read(H1), FinalStep(answer="1 January 900")],
              "1 January 900", q=q),
        # Lothair III is both a near-namesake of hop 1 and marked: one row of each kind.
        _traj("namesake_and_marked", [*read_both, _search("Lothair III", DECOY), _read(DECOY),
                                      FinalStep(answer="Hedwig of Formbach")], "Hedwig of Formbach", q=q),
        # Right, and no distractor ever reached it.
        _traj("clean", [*read_both, FinalStep(answer="20 March 851")], "20 March 851", q=q, contain=1.0),
    ])
    load_chunks(path, CHUNKS, DATASET)
    return path


def test_decoy_passages_lists_marked_distractors_beside_near_namesakes(db):
    rows = _rows(db, "SELECT kind, question_id, gold_chunk_id, decoy_chunk_id, decoy_title, distance "
                     "FROM decoy_passages ORDER BY kind, decoy_chunk_id")
    assert [tuple(r.values()) for r in rows] == [
        ("dataset_distractor", "q-lothair", None, DECOY, "Lothair III", None),
        ("dataset_distractor", "q-lothair", None, OTHER, "Xanten", None),
        ("near_namesake", None, H1, DECOY, "Lothair III", 1),
    ]


def test_trajectory_decoys_counts_each_kind_read_and_answered(db):
    rows = _rows(db, "SELECT trajectory_id, decoy_kind, decoy_chunk_id, gold_chunk_id, gold_hop, retrieved_step, "
                     "best_rank, read_step, read_decoy, answered_from_decoy FROM trajectory_decoys "
                     "ORDER BY trajectory_id, decoy_kind")
    got = [(r["trajectory_id"].split("::")[1], *list(r.values())[1:]) for r in rows]
    assert got == [
        ("listed_distractor", "dataset_distractor", OTHER, None, None, 0, 2, None, False, False),
        ("namesake_and_marked", "dataset_distractor", DECOY, None, None, 4, 1, 5, True, True),
        ("namesake_and_marked", "near_namesake", DECOY, H1, 1, 4, 1, 5, True, True),
        ("read_distractor", "dataset_distractor", OTHER, None, None, 4, 1, 5, True, True),
    ]


def test_answering_from_a_marked_distractor_is_a_decoy_confusion_with_no_hop(db):
    got = {r["trajectory_id"].split("::")[1]: r for r in _rows(db, "SELECT * FROM first_decisive_error")}
    assert set(got) == {"read_distractor", "listed_distractor", "namesake_and_marked"}
    marked = got["read_distractor"]
    assert (marked["rule"], marked["step_index"], marked["hop"], marked["confusion"], marked["chunk_id"]) == (
        "other_passage_entity", 6, None, "decoy", OTHER)
    # Both kinds answered: the near-namesake names the hop it imitates.
    both = got["namesake_and_marked"]
    assert (both["rule"], both["hop"], both["confusion"], both["chunk_id"]) == (
        "other_passage_entity", 1, "decoy", DECOY)
    assert got["listed_distractor"]["rule"] == "never_queried"  # hop 2 never asked for; the distractor decided nothing


def _one_search_per_question(dataset: str, questions: list[Question], contexts: dict[str, list[str]]) -> list:
    from trajscope.format import Run

    run = Run(run_id=f"{dataset}_ctx", dataset=dataset)
    return [Trajectory(trajectory_id=f"{dataset}::{q.question_id}", run=run, question=q,
                       steps=[SearchStep(query=q.text, candidates=[Candidate(chunk_id=c, rank=i) for i, c in
                                                                   enumerate(contexts[q.question_id], 1)]),
                              FinalStep(answer="x")], final_answer="x", end_reason="final")
            for q in questions]


@pytest.mark.parametrize("fixture, expected", [
    # Highmoor (hotpotqa:2) is in both questions' context; no supporting fact names it.
    ("hotpotqa_list.json", {("5a0000000000000000000001", "hotpotqa:2"), ("5a0000000000000000000002", "hotpotqa:2")}),
    # 2Wiki official: "Tal Ore" is in the first question's context, not among its supporting facts.
    ("2wiki_official.json", {("aa000000000000000000000000000001", "2wikimultihopqa:2")}),
    # MuSiQue: the second "Ivo Sand" paragraph of 2hop__100_200 has is_supporting false.
    ("musique.jsonl", {("2hop__100_200", "musique:1")}),
])
def test_a_datasets_own_marks_reach_the_decoy_views(tmp_path, fixture, expected):
    ds = load_dataset(FIX / fixture)
    db = tmp_path / "w.duckdb"
    load_questions(db, ds.questions, ds.name)  # as `trajscope data load` stores a dataset
    load_chunks(db, ds.chunks, ds.name)
    marked = {(r["question_id"], r["decoy_chunk_id"]) for r in _rows(
        db, "SELECT question_id, decoy_chunk_id FROM decoy_passages WHERE kind = 'dataset_distractor'")}
    assert marked == expected
    # A search listing each question's whole context meets exactly its marked distractors.
    ingest_trajectories(db, _one_search_per_question(ds.name, ds.questions, ds.contexts))
    met = {(r["question_id"], r["decoy_chunk_id"]) for r in _rows(
        db, "SELECT question_id, decoy_chunk_id FROM trajectory_decoys WHERE decoy_kind = 'dataset_distractor'")}
    assert met == expected


def test_a_source_without_marks_gets_no_distractors():
    # The HippoRAG 2Wiki layout has evidence triples only: no context, so nothing is marked (never guessed).
    ds = load_dataset(FIX / "2wiki_hipporag")
    assert all(q.distractor_chunk_ids == [] for q in ds.questions)
