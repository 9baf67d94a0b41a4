"""Evidence funnel, first decisive error and decoys on a hand-built fixture with one trajectory per rule."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from funnel_records import CHUNKS, DATASET, DECOY, H1, H2, cases, correct_trajectory, reason_mismatches
from scipy.stats import binomtest

from trajscope.analysis.queries import FUNNEL_STAGES, compare_funnels
from trajscope.cli import main as cli
from trajscope.format import (
    Candidate,
    Capabilities,
    FinalStep,
    Judgment,
    Passage,
    Question,
    ReadStep,
    RetrieverSettings,
    Run,
    SearchStep,
    Trajectory,
)
from trajscope.ingest.datasets import load_dataset
from trajscope.warehouse import ingest_trajectories, load_chunks, open_readonly


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("funnel") / "w.duckdb"
    ingest_trajectories(path, [t for t, *_ in cases().values()] + [correct_trajectory()])
    load_chunks(path, CHUNKS, DATASET)
    return path


def _rows(db, sql: str, *params) -> list[dict]:
    with open_readonly(db) as con:
        cur = con.execute(sql, list(params))
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]


def test_every_rule_gets_exactly_its_expected_rule_step_and_hop(db):
    got = {r["trajectory_id"].split("::")[1]: r for r in _rows(db, "SELECT * FROM first_decisive_error")}
    expected = {name: (rule, step, hop) for name, (_, rule, step, hop) in cases().items()}
    assert set(got) == set(expected), "one row per wrong trajectory, none for the right one"
    assert {n: (r["rule"], r["step_index"], r["hop"]) for n, r in got.items()} == expected


def test_missing_capabilities_are_named_never_guessed(db):
    got = {r["trajectory_id"].split("::")[1]: r for r in _rows(db, "SELECT * FROM first_decisive_error")}
    assert got["missing_read"]["missing_capability"] == "read_action"
    assert got["missing_read"]["reason"].startswith("does not apply:")
    assert got["no_gold"]["missing_capability"] == "gold_passages"
    assert "no gold passages" in got["no_gold"]["reason"]
    assert all(r["missing_capability"] is None and r["reason"] is None for r in got.values() if r["rule"])


def test_confusions_name_the_other_passage(db):
    got = {r["trajectory_id"].split("::")[1]: r for r in _rows(db, "SELECT * FROM first_decisive_error")}
    assert (got["bridge"]["confusion"], got["bridge"]["answered_entity"], got["bridge"]["chunk_id"]) == (
        "bridge", "Ermengarde of Tours", H1)
    assert (got["decoy"]["confusion"], got["decoy"]["chunk_id"]) == ("decoy", DECOY)


def test_funnel_rows_stages_and_steps(db):
    rows = _rows(db, "SELECT * FROM evidence_funnel WHERE trajectory_id = 'funnel::not_read' ORDER BY hop")
    assert [(r["hop"], r["chunk_id"], r["title"]) for r in rows] == [
        (1, H1, "Lothair II"), (2, H2, "Ermengarde of Tours")]
    h1, h2 = rows
    assert (h1["queried_step"], h1["retrieved_step"], h1["snippet_shown_step"], h1["read_step"]) == (0, 0, 0, 1)
    # Hop 1 yields Ermengarde of Tours, and the step-2 query names it: hop 1 was used onward.
    assert (h1["used"], h1["used_step"], h1["used_via"]) == (True, 2, "next_query")
    assert (h2["queried_step"], h2["retrieved_step"], h2["best_rank"], h2["snippet_shown"], h2["read"]) == (
        2, 2, 1, True, False)
    assert h2["used"] is False and h2["hop_order"] == "evidence"
    ranked = _rows(db, "SELECT * FROM evidence_funnel WHERE trajectory_id = 'funnel::ranked_out' AND hop = 1")[0]
    assert (ranked["retrieved"], ranked["best_rank"], ranked["snippet_shown"]) == (True, 4, False)
    reg = _rows(db, "SELECT * FROM evidence_funnel WHERE trajectory_id = 'funnel::reasoning' AND hop = 1")[0]
    assert (reg["used_via"], reg["used_step"]) == ("register", 1)
    right = _rows(db, "SELECT * FROM evidence_funnel WHERE trajectory_id = 'funnel::correct' AND hop = 2")[0]
    assert (right["used_via"], right["used_step"]) == ("final", 4)
    noread = _rows(db, "SELECT * FROM evidence_funnel WHERE trajectory_id = 'funnel_noread::missing_read'")
    assert all(r["read"] is None and "read does not apply" in r["stage_reason"] for r in noread)


def test_each_stage_carries_its_own_reason_exactly_when_it_does_not_apply(db):
    with open_readonly(db) as con:
        assert reason_mismatches(con) == []
    rows = _rows(db, "SELECT f.*, rc.read_action_reason AS capability FROM evidence_funnel f "
                     "JOIN run_capabilities rc USING (run_id)")
    noread = [r for r in rows if r["run_id"] == "funnel_noread"]
    # The log without a read action: read is NULL with run_capabilities' reason; every other stage applies.
    assert noread and all(r["read"] is None and r["read_reason"] == r["capability"] for r in noread)
    assert all(r[f"{s}_reason"] is None for r in noread for s in FUNNEL_STAGES if s != "read")
    assert {r["stage_reason"] for r in noread} == {"read does not apply: " + noread[0]["capability"]}
    others = [r for r in rows if r["run_id"] != "funnel_noread"]
    assert others and all(r[f"{s}_reason"] is None for r in others for s in FUNNEL_STAGES)
    assert {r["stage_reason"] for r in others} == {""}


def test_funnel_summary_shares_by_hand(db):
    # Run 'funnel': 10 trajectories with the 2 gold passages (9 wrong + the right one); hop 2 is read in
    # bridge, decoy, reasoning, gave_up, correct = 5 of 10.
    by_hop = {r["hop"]: r for r in _rows(
        db, "SELECT * FROM evidence_funnel_summary WHERE run_id = 'funnel' AND grouped_by = 'hop'")}
    assert by_hop[2]["n_passages"] == 10 and by_hop[2]["read"] == pytest.approx(0.5)
    # Hop 1 read in all but ranked_out and run_error: 8 of 10.
    assert by_hop[1]["read"] == pytest.approx(0.8)
    whole = _rows(db, "SELECT * FROM evidence_funnel_summary WHERE run_id = 'funnel' AND grouped_by = 'run'")[0]
    assert whole["n_passages"] == 20 and whole["n_trajectories"] == 10


def test_decoys_read_and_answered(db):
    rows = _rows(db, "SELECT * FROM trajectory_decoys ORDER BY trajectory_id")
    by = {r["trajectory_id"].split("::")[1]: r for r in rows}
    assert by["decoy"]["read_decoy"] and by["decoy"]["answered_from_decoy"]
    assert by["decoy"]["gold_chunk_id"] == H1 and by["decoy"]["gold_hop"] == 1
    # ranked_out listed the decoy at rank 1 but never read it nor answered from it.
    assert (by["ranked_out"]["read_decoy"], by["ranked_out"]["answered_from_decoy"]) == (False, False)
    assert set(by) == {"decoy", "ranked_out"}


WIKI = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "2wikimultihopqa"


@pytest.mark.skipif(not WIKI.is_dir(), reason="needs ../shared/data/2wikimultihopqa")
def test_2wiki_hop_order_follows_the_evidence_triples_for_50_questions(tmp_path):
    raw = json.loads((WIKI / "questions_1000.json").read_text())[:50]
    corpus = json.loads((WIKI / "corpus_6119.json").read_text())
    index_of = {p["title"]: i for i, p in enumerate(corpus)}
    # Independently: the distinct triple subjects in order, those that are corpus titles, as chunk ids;
    # each subject's entity is itself and it yields its triples' objects.
    expected = {}
    for q in raw:
        subjects = list(dict.fromkeys(s for s, _, _ in q["evidence"]))
        matched = [s for s in subjects if s in index_of]
        expected[q["id"]] = [(hop, f"2wikimultihopqa:{index_of[s]}", s,
                              sorted({o for s2, _, o in q["evidence"] if s2 == s}))
                             for hop, s in enumerate(matched, 1)]
    ds = load_dataset(WIKI / "questions_1000.json", corpus=WIKI / "corpus_6119.json")
    questions = [q for q in ds.questions if q.question_id in expected]
    assert len(questions) == 50
    db = tmp_path / "w.duckdb"
    run = Run(run_id="wiki_rev", dataset=ds.name, retriever=RetrieverSettings(top_k=10))
    # One search listing the gold passages in reverse: first appearance would give the reverse order.
    trajectories = [Trajectory(trajectory_id=f"wiki_rev::{q.question_id}", run=run, question=q,
                               steps=[SearchStep(query=q.text, candidates=[
                                   Candidate(chunk_id=c, rank=i) for i, c in enumerate(reversed(q.gold_chunk_ids), 1)]),
                                   FinalStep(answer="x")], final_answer="x", end_reason="final")
                    for q in questions]
    ingest_trajectories(db, trajectories)
    load_chunks(db, ds.chunks, ds.name)
    rows = _rows(db, "SELECT question_id, hop, chunk_id, bridge_entity, answer_entities, hop_order "
                     "FROM evidence_funnel ORDER BY question_id, hop")
    got: dict[str, list] = {}
    for r in rows:
        assert r["hop_order"] == "evidence"
        got.setdefault(r["question_id"], []).append((r["hop"], r["chunk_id"], r["bridge_entity"],
                                                    sorted(r["answer_entities"])))
    want = {qid: hops for qid, hops in expected.items() if hops}
    assert sum(len(h) for h in want.values()) > 90
    assert got == want


def _paired_runs() -> list[Trajectory]:
    """12 two-hop questions; run A reads hop 2 on questions 0-3, run B on 0-9 (hop 1 read by both everywhere)."""
    out = []
    for name, reads_hop2 in (("A", range(4)), ("B", range(10))):
        run = Run(run_id=f"pair_{name}", dataset=DATASET, retriever=RetrieverSettings(top_k=5),
                  capabilities=Capabilities(search_candidates=True, read_action=True, gold_passages=True))
        for i in range(12):
            g1, g2 = f"p{i}:1", f"p{i}:2"
            q = Question(question_id=f"pq{i}", text=f"q {i}", dataset=DATASET, gold_answer=f"a{i}",
                         gold_chunk_ids=[g1, g2], gold_order="chain")
            listed = [Candidate(chunk_id=g1, rank=1), Candidate(chunk_id=g2, rank=2)]
            steps = [SearchStep(query=f"q {i}", candidates=listed),
                     ReadStep(chunk_ids=[g1], passages=[Passage(chunk_id=g1, text="t")])]
            if i in reads_hop2:
                steps.append(ReadStep(chunk_ids=[g2], passages=[Passage(chunk_id=g2, text="t")]))
            steps.append(FinalStep(answer="x"))
            out.append(Trajectory(trajectory_id=f"{run.run_id}::{i}", run=run, question=q, steps=steps,
                                  final_answer="x", end_reason="final",
                                  judgments=[Judgment(judge="contain", score=float(i in reads_hop2))]))
    return out


def test_paired_stage_table_counts_discordant_questions_and_mcnemar(tmp_path):
    db = tmp_path / "w.duckdb"
    ingest_trajectories(db, _paired_runs())
    with open_readonly(db) as con:
        frame = compare_funnels(con, "pair_A", "pair_B").frame
    rows = {(r["scope"], r["stage"]): r for r in frame.iter_rows(named=True)}
    hop2 = rows[("hop 2", "read")]
    # Hop 2 read under A on 4 of 12, under B on 10 of 12; B only on 6, A only on none.
    assert (hop2["n_pairs"], hop2["a_only"], hop2["b_only"]) == (12, 0, 6)
    assert (hop2["share_a"], hop2["share_b"]) == (pytest.approx(4 / 12), pytest.approx(10 / 12))
    assert hop2["mcnemar_exact_p"] == pytest.approx(binomtest(0, 6, 0.5).pvalue)
    # All hops read: the same 4 vs 10 (hop 1 is read everywhere); hop 1 read: no change, p = 1.
    assert (rows[("all hops", "read")]["a_only"], rows[("all hops", "read")]["b_only"]) == (0, 6)
    assert rows[("hop 1", "read")]["mcnemar_exact_p"] == 1.0 and rows[("hop 1", "read")]["delta"] == 0
    assert [r["stage"] for r in frame.iter_rows(named=True)][:5] == list(FUNNEL_STAGES)
    out = CliRunner().invoke(cli, ["compare", "pair_A", "pair_B", "--funnel", "--db", str(db), "--format", "csv"])
    assert out.exit_code == 0, out.output
    assert "hop 2,read,12," in out.output and "Evidence funnel (pair_B vs pair_A)" in out.output


def test_without_a_stated_order_hops_follow_first_appearance(tmp_path):
    q = Question(question_id="q-free", text="q", dataset=DATASET, gold_answer="a", gold_chunk_ids=["u:1", "u:2", "u:3"])
    run = Run(run_id="free", dataset=DATASET, retriever=RetrieverSettings(top_k=1))
    # u:3 listed first (step 0, rank 1), u:1 next (step 1, rank 2: beyond the top-1), u:2 never.
    steps = [SearchStep(query="x", candidates=[Candidate(chunk_id="u:3", rank=1)]),
             SearchStep(query="y", candidates=[Candidate(chunk_id="v:9", rank=1), Candidate(chunk_id="u:1", rank=2)]),
             FinalStep(answer="b")]
    db = tmp_path / "w.duckdb"
    ingest_trajectories(db, [Trajectory(trajectory_id="free::q", run=run, question=q, steps=steps, final_answer="b",
                                        end_reason="final")])
    rows = _rows(db, "SELECT chunk_id, hop, hop_order, snippet_shown, snippet_shown_step "
                     "FROM evidence_funnel ORDER BY hop")
    assert [(r["chunk_id"], r["hop"], r["snippet_shown"], r["snippet_shown_step"]) for r in rows] == [
        ("u:3", 1, True, 0), ("u:1", 2, False, None), ("u:2", 3, False, None)]
    assert {r["hop_order"] for r in rows} == {"first_appearance"}
