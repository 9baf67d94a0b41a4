"""Read-Gate's four failure classes on tiny warehouses where the old definition gives another number: a forced
answer keeps its class (RG §3), and "retrieval" means the gold was never shown within the run's top-k."""
from __future__ import annotations

import pytest

from trajscope.analysis.report import build_report
from trajscope.format import (
    Candidate,
    FinalStep,
    ForcedAnswerStep,
    Judgment,
    Passage,
    Question,
    ReadStep,
    RetrieverSettings,
    Run,
    SearchStep,
    Trajectory,
    make_trajectory_id,
)
from trajscope.warehouse import ingest_trajectories, open_readonly

QUESTION = "Where is Ann Lee from?"


def _traj(run: Run, qid: str, steps: list, answer: str, end_reason: str, right: bool, gold: list[str]) -> Trajectory:
    return Trajectory(
        trajectory_id=make_trajectory_id(run.run_id, qid), run=run,
        question=Question(question_id=qid, text=QUESTION, dataset=run.dataset, gold_answer="Paris",
                          gold_chunk_ids=gold),
        steps=steps, final_answer=answer, end_reason=end_reason,
        judgments=[Judgment(judge="contain", score=1.0 if right else 0.0)])


def _forced_fixture() -> list[Trajectory]:
    """Baseline, 11 questions: 4 wrong no-read finals, 1 wrong answer forced at the loop cap without a read,
    6 right after reading the gold; the gate run answers all 11 right after a read."""
    records = []
    for condition in ("baseline", "read_gate"):
        run = Run(run_id=f"rg-{condition}", dataset="hotpotqa", controller="read_gate", condition=condition,
                  model="m")
        for i in range(11):
            gold = f"g{i}"
            search = SearchStep(query="Ann Lee", candidates=[Candidate(chunk_id=gold, rank=1, snippet="Ann Lee")])
            read = ReadStep(chunk_ids=[gold], passages=[Passage(chunk_id=gold, text="Ann Lee is from Paris.")])
            if condition == "baseline" and i < 4:
                steps, end, right = [search, FinalStep(answer="Lyon")], "final", False
            elif condition == "baseline" and i == 4:
                steps, end, right = [search, search, ForcedAnswerStep(answer="Lyon")], "loop_cap", False
            else:
                steps, end, right = [search, read, FinalStep(answer="Paris")], "final", True
            records.append(_traj(run, f"q{i}", steps, "Paris" if right else "Lyon", end, right, [gold]))
    return records


def _is_discipline(t: Trajectory) -> bool:
    """RG §3 worked out on the record: a wrong answer given without any read step (forced or not)."""
    wrong = t.judgments[0].score < 0.5
    return wrong and not any(isinstance(s, ReadStep) for s in t.steps)


@pytest.fixture(scope="module")
def forced(tmp_path_factory):
    records = _forced_fixture()
    path = tmp_path_factory.mktemp("forced") / "wh.duckdb"
    ingest_trajectories(path, records)
    with open_readonly(path) as con:
        labels = {r[0]: r[1:] for r in con.execute(
            "SELECT question_id, label, forced_end, discipline_subtype FROM failure_rg "
            "WHERE run_id = 'rg-baseline' AND extractor = 'regex'").fetchall()}
        plane = con.execute("SELECT n_judged, n_disc, p_disc FROM failure_plane "
                            "WHERE run_id = 'rg-baseline' AND extractor = 'regex'").fetchone()
        tables = {t.name: t for t in build_report(con, "read-gate", ["rg-baseline", "rg-read_gate"], db_path=path)}
    return records, labels, plane, tables


def _row(table, index=0):
    return dict(zip([c.key for c in table.columns], table.rows[index], strict=True))


def test_an_answer_forced_at_the_loop_cap_keeps_its_class_and_its_end_as_a_flag(forced):
    _, labels, _, _ = forced
    assert labels["q4"] == ("discipline", "ended_loop_cap", "no_read_final")
    assert {v[0] for v in labels.values()} == {"discipline"}  # never a fifth class
    assert all(v[1] is None for k, v in labels.items() if k != "q4")


def test_table_3_and_the_plane_count_the_forced_answer_as_discipline(forced):
    records, _, plane, tables = forced
    base = [t for t in records if t.run.condition == "baseline"]
    expected = sum(_is_discipline(t) for t in base)
    assert expected == 5  # 5 of 11: 45.5 by the paper's classes, 36.4 when the forced answer drops out
    assert plane == (11, 5, pytest.approx(expected / len(base)))
    row = _row(tables["rg_t3"])
    assert row["baseline_discipline"] == pytest.approx(100 * expected / len(base))
    assert round(row["baseline_discipline"], 1) == 45.5
    point = next(dict(zip([c.key for c in tables["rg_plane"].columns], r, strict=True))
                 for r in tables["rg_plane"].rows if r[1] == "baseline")
    assert point["p_disc"] == pytest.approx(100 * expected / len(base))
    # §5.1's co-occurrence: every wrong baseline answer is discipline-only (none read the gold).
    cooc = _row(tables["rg_cooc"])
    assert cooc[[c.key for c in tables["rg_cooc"].columns][1]] == 5


def test_retrieval_is_gold_never_shown_within_the_top_k(tmp_path):
    """top_k = 5: a gold listed at rank 8 was never shown, so the wrong answer is a retrieval failure (the old
    rule, any rank, said ambiguity); the same gold at rank 3 leaves ambiguity."""
    run = Run(run_id="rg-k5", dataset="hotpotqa", controller="read_gate", condition="baseline", model="m",
              retriever=RetrieverSettings(top_k=5))
    records, ranks = [], {"deep": 8, "shallow": 3}
    for qid, rank in ranks.items():
        cands = [Candidate(chunk_id=f"n{r}", rank=r, snippet="Ann Lee") for r in range(1, 9) if r != rank]
        cands.append(Candidate(chunk_id=f"gold-{qid}", rank=rank, snippet="Ann Lee"))
        read = ReadStep(chunk_ids=["n1"], passages=[Passage(chunk_id="n1", text="Ann Lee lived in Lyon.")])
        steps = [SearchStep(query="Ann Lee", candidates=cands), read, FinalStep(answer="Lyon")]
        records.append(_traj(run, qid, steps, "Lyon", "final", False, [f"gold-{qid}"]))
    path = tmp_path / "wh.duckdb"
    ingest_trajectories(path, records)
    with open_readonly(path) as con:
        got = dict(con.execute("SELECT question_id, label FROM failure_rg WHERE extractor = 'regex'").fetchall())
        shown = dict(con.execute("SELECT question_id, snippet_shown FROM evidence_funnel").fetchall())
    expected = {qid: "retrieval" if rank > 5 else "ambiguity" for qid, rank in ranks.items()}
    assert got == expected
    # The evidence funnel on the same trajectories agrees: the deep gold's snippet was never shown.
    assert shown == {qid: rank <= 5 for qid, rank in ranks.items()}
