"""Issue 21: each measure on a tiny warehouse built so the wrong definition and the paper's give different
numbers; every expected value is worked out here from the papers' text, not by the code's SQL."""
from __future__ import annotations

import pytest

from engine.judge_pass import judge_run
from engine.prompts import render_prompt
from trajscope.format import (
    Candidate,
    FinalStep,
    ForcedAnswerStep,
    GateRejectionStep,
    Judgment,
    Passage,
    Question,
    ReadStep,
    Run,
    SearchStep,
    Trajectory,
    answer_invalidity,
    contain_match,
    make_trajectory_id,
    score_answer,
)
from warehouse import ingest_trajectories, open_readonly

DEMO_017 = "Which town was founded earlier, Stenwick or Kessbridge?"
# The demo's forced answer: the gate's own corrective message, reworded by the small model.
ECHO = "The passage you have read covers 0% of the question's named entities (missing: Stenwick, Kessbridge)."


def _traj(run: Run, qid: str, question: str, gold: str, steps: list, answer: str | None, *,
          judgments: list[Judgment] = (), end_reason: str = "final", **qkw) -> Trajectory:
    return Trajectory(
        trajectory_id=make_trajectory_id(run.run_id, qid), run=run,
        question=Question(question_id=qid, text=question, dataset=run.dataset, gold_answer=gold, **qkw),
        steps=steps, final_answer=answer, end_reason=end_reason, judgments=list(judgments))


# ---------------------------------------------------------------------------------------------- item 0


def test_echo_of_the_gate_message_is_not_correct_under_any_lexical_judge():
    gate_message = render_prompt("gate_lowev", coverage=0, missing="Stenwick, Kessbridge")
    # The wrong definition: plain containment finds the gold "Stenwick" inside the echoed message.
    assert contain_match(ECHO, "Stenwick") == 1.0
    assert answer_invalidity(ECHO, DEMO_017, [gate_message]) == "echo"
    scores = {j.judge: j.score for j in score_answer(ECHO, "Stenwick", question=DEMO_017, messages=[gate_message])}
    assert scores == {"em": 0.0, "f1": 0.0, "contain": 0.0}
    # Naming a gold entity the gate also names is no echo: a real answer keeps its score.
    assert answer_invalidity("Stenwick", DEMO_017, [gate_message]) is None
    assert answer_invalidity("Stenwick was founded first, in 1410.", DEMO_017, [gate_message]) is None


def test_an_answer_naming_every_option_is_a_hedge():
    assert contain_match("Stenwick or Kessbridge", "Stenwick") == 1.0  # the wrong definition's 1
    assert answer_invalidity("Stenwick or Kessbridge", DEMO_017) == "hedge"
    assert answer_invalidity("either Kessbridge, or maybe Stenwick", DEMO_017) == "hedge"
    assert answer_invalidity("Kessbridge", DEMO_017) is None
    # Three options; an answer naming two of them is not a hedge.
    three = "Who was born first: Ann Lee, Bo Park or Cy Dunn?"
    assert answer_invalidity("Ann Lee, Bo Park or Cy Dunn", three) == "hedge"
    assert answer_invalidity("Ann Lee or Bo Park", three) is None
    assert answer_invalidity("Paris or Lyon", "Where was Ann born?") is None  # not a comparison


@pytest.fixture(scope="module")
def echo_warehouse(tmp_path_factory):
    """Four forced / final answers to demo-017, each with the source's own verdicts contain 1, llm 1."""
    run = Run(run_id="gate", dataset="demo", controller="read_gate", condition="full", model="m")
    gate_message = render_prompt("gate_lowev", coverage=0, missing="Stenwick, Kessbridge")
    right = [Judgment(judge="contain", score=1.0), Judgment(judge="llm", score=1.0, judge_model="j")]
    search = SearchStep(query="Stenwick", candidates=[Candidate(chunk_id="c1", rank=1, snippet="Stenwick ...")])
    read = ReadStep(chunk_ids=["c1"], passages=[Passage(chunk_id="c1", text="Stenwick was founded in 1410.")])
    rejection = GateRejectionStep(gate="lowev", rejected_answer="Stenwick", observation=gate_message)
    records = [
        _traj(run, "echo", DEMO_017, "Stenwick", [search, read, rejection, ForcedAnswerStep(answer=ECHO)], ECHO,
              judgments=right, end_reason="forced_answer", question_type="comparison"),
        _traj(run, "hedge", DEMO_017, "Stenwick", [search, read, FinalStep(answer="Stenwick or Kessbridge")],
              "Stenwick or Kessbridge", judgments=right, question_type="comparison"),
        _traj(run, "plain", DEMO_017, "Stenwick", [search, read, rejection, FinalStep(answer="Stenwick")],
              "Stenwick", judgments=right, question_type="comparison"),
        _traj(run, "long", DEMO_017, "Stenwick", [search, read, FinalStep(answer="Stenwick, founded in 1410")],
              "Stenwick, founded in 1410", judgments=right, question_type="comparison"),
    ]
    path = tmp_path_factory.mktemp("echo") / "wh.duckdb"
    ingest_trajectories(path, records)
    judge_run(path, "gate", extractors=("regex",))
    return path


def test_echo_and_hedge_count_as_wrong_abstained_and_hedged_in_the_warehouse(echo_warehouse):
    with open_readonly(echo_warehouse) as con:
        rows = {r[0].split(":")[-1]: r[1:] for r in con.execute(
            "SELECT trajectory_id, correct, contain, llm, abstained, echoed, hedged FROM trajectory_forensics"
        ).fetchall()}
        summary = con.execute("SELECT contain_acc, llm_acc FROM run_summary WHERE run_id = 'gate'").fetchone()
        label = con.execute("SELECT label FROM failure_erag WHERE trajectory_id LIKE '%echo'").fetchone()[0]
        from app.queries import replay_header_sql
        cursor = con.execute(replay_header_sql(make_trajectory_id("gate", "echo")))
        check = dict(zip([d[0] for d in cursor.description], cursor.fetchone(), strict=True))["answer_check"]
    # The source said right for all four; by the rule, 2 of 4 are answers, and both are right.
    assert rows["echo"] == (False, 0.0, 0.0, True, True, False)
    assert rows["hedge"] == (False, 0.0, 0.0, False, False, True)
    assert rows["plain"][:3] == (True, 1.0, 1.0) and rows["long"][:3] == (True, 1.0, 1.0)
    assert summary == (pytest.approx(2 / 4), pytest.approx(2 / 4))
    assert label == "gave_up"  # an echo of the gate is no answer: the agent gave up (ExecutionRAG App. E)
    assert check.startswith("echo")


# ---------------------------------------------------------------------------------------------- item 1


def test_execution_rag_llm_acc_is_run_summary_llm_acc(tmp_path):
    """Two judges split 1 / 0 on a right answer: a tie counts as correct (LLM-Acc 100), not 50 averaged."""
    from warehouse.report import build_report

    run = Run(run_id="er", dataset="musique", controller="execution_rag", condition="register", model="m")
    records = []
    for qid, verdicts in (("q1", (1.0, 0.0)), ("q2", (1.0, 1.0))):
        judgments = [Judgment(judge="contain", score=1.0)] + [
            Judgment(judge="llm", score=v, judge_model=f"judge-{k}") for k, v in enumerate(verdicts)]
        records.append(_traj(run, qid, f"Question {qid}?", "Paris", [FinalStep(answer="Paris")], "Paris",
                             judgments=judgments, hop_count=2, question_type="2hop"))
    path = tmp_path / "wh.duckdb"
    ingest_trajectories(path, records)
    with open_readonly(path) as con:
        tables = {t.name: t for t in build_report(con, "execution-rag", ["er"], db_path=path)}
        llm_acc = con.execute("SELECT llm_acc FROM run_summary WHERE run_id = 'er'").fetchone()[0]
    # The paper's LLM-Acc: the share of answers the judge calls correct; a 1 / 0 split is a tie, correct.
    expected = 100.0 * 2 / 2
    row = dict(zip([c.key for c in tables["er_t1"].columns], tables["er_t1"].rows[0], strict=True))
    assert row["musique_llm"] == pytest.approx(expected)
    assert 100 * llm_acc == pytest.approx(expected)
    t3 = dict(zip([c.key for c in tables["er_t3"].columns], tables["er_t3"].rows[0], strict=False))
    assert t3.get("llm") == pytest.approx(expected)
