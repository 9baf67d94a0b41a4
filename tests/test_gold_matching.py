"""Gold supporting passages to corpus chunks (ExecutionRAG App. E):
MuSiQue paragraphs match by 40-character fingerprint first, title as fallback."""
from __future__ import annotations

from trajscope.format import Chunk
from trajscope.ingest.datasets import FINGERPRINT_CHARS, GoldMatcher, GoldRef
from trajscope.ingest.datasets._matching import GoldMatch

CHUNKS = [
    # The corpus's only "Dunmere" passage is an older revision; the quoted paragraph is the other chunk's text.
    Chunk(chunk_id="k0", title="Dunmere", text="Dunmere is a hamlet on the moor, once a mining village."),
    Chunk(chunk_id="k1", title="Dunmere (town)", text="Dunmere lies on the river Orrin and has a harbour."),
    Chunk(chunk_id="k2", title="Orrin", text="The Orrin is a river that flows into the northern sea."),
]


def test_a_quoted_paragraph_is_matched_by_fingerprint_before_its_title():
    ref = GoldRef(title="Dunmere", text="Dunmere lies on the river Orrin and has a harbour!", paragraph=True)
    assert GoldMatcher(CHUNKS).match(ref) == GoldMatch("k1", "fingerprint")
    # The same reference as a title-named gold (HotpotQA supporting facts) keeps the unique title.
    titled = GoldRef(title="Dunmere", text=ref.text)
    assert GoldMatcher(CHUNKS).match(titled) == GoldMatch("k0", "title")


def test_title_is_the_fallback_and_the_fingerprint_is_forty_normalised_characters():
    matcher = GoldMatcher(CHUNKS)
    reworded = GoldRef(title="Orrin", text="A river, the Orrin, flows north.", paragraph=True)
    assert matcher.match(reworded) == GoldMatch("k2", "title")
    assert FINGERPRINT_CHARS == 40
    same_prefix = GoldRef(text="The Orrin is a river that flows into the XX entirely different ending", paragraph=True)
    assert matcher.match(same_prefix) == GoldMatch("k2", "fingerprint")
    nowhere = GoldRef(title="Nowhere", text="Nothing like any passage.", paragraph=True)
    assert matcher.match(nowhere) == GoldMatch(None, "unmatched")


def test_unmatched_paragraphs_stay_in_the_hop_level_recall_denominator(tmp_path):
    # tiny/q2 names two supporting paragraphs; one matches a corpus chunk (tiny:2), one matches nothing.
    from pathlib import Path

    import msgspec
    from fixtures.forensics.builders import final, read, search, trajectory

    from trajscope.format import Run
    from trajscope.ingest.datasets import load_dataset
    from trajscope.warehouse import ingest_trajectories, open_warehouse

    ds = load_dataset(Path(__file__).parent / "fixtures" / "datasets" / "hipporag" / "tiny.json")
    q2 = next(q for q in ds.questions if q.question_id == "tiny/q2.json")
    assert (q2.gold_chunk_ids, q2.gold_paragraphs, ds.gold_counts[q2.question_id]) == (["tiny:2"], 2, (2, 1))
    run = Run(run_id="r", dataset="tiny", condition="register")
    traj = trajectory(run, q2.question_id, q2.text, q2.gold_answer, [search(("tiny:2", "Dunmere lies")),
                      read(("tiny:2", "Dunmere lies on the river Orrin.")), final("Orrin")])
    traj = msgspec.structs.replace(traj, question=q2)
    path = tmp_path / "wh.duckdb"
    ingest_trajectories(path, [traj])
    with open_warehouse(path) as con:
        row = con.execute("SELECT n_gold, n_gold_reached, gold_paragraphs, hop_evidence_recall "
                          "FROM trajectory_forensics").fetchone()
        hop = con.execute("SELECT hop_evidence_recall FROM hop_breakdown").fetchone()[0]
    assert row == (1, 1, 2, 0.5) and hop == 0.5
