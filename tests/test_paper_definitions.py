"""Each measure on a tiny warehouse built so the wrong definition and the paper's give different
numbers; every expected value is worked out here from the papers' text, not by the code's SQL."""
from __future__ import annotations

from collections import defaultdict

import msgspec
import pytest

from trajscope.engine.judge_pass import judge_run
from trajscope.engine.prompts import render_prompt
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
from trajscope.warehouse import ingest_trajectories, open_readonly

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
        from trajscope.app.queries import replay_header_sql
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
    from trajscope.analysis.report import build_report

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


# ------------------------------------------------------------------------------------------ items 8, 7


def _rg_runs() -> list[Trajectory]:
    """Baseline: 6 questions, 4 judged (3 right after a read, 1 wrong no-read final), 2 without any verdict;
    the gate run answers the 4 judged ones right after a read."""
    records = []
    for condition in ("baseline", "read_gate"):
        run = Run(run_id=f"rg-{condition}", dataset="hotpotqa", controller="read_gate", condition=condition,
                  model="m")
        for i in range(6):
            qid = f"q{i}"
            search = SearchStep(query="x", candidates=[Candidate(chunk_id=f"g{i}", rank=1, snippet="Paris is big")])
            read = ReadStep(chunk_ids=[f"g{i}"], passages=[Passage(chunk_id=f"g{i}", text="Paris is big.")])
            wrong_no_read = condition == "baseline" and i == 0
            steps = [search] + ([] if wrong_no_read else [read]) + [FinalStep(answer="Lyon" if wrong_no_read
                                                                              else "Paris")]
            judged = i < 4
            records.append(_traj(run, qid, "Where is Ann Lee from?", "Paris", steps, steps[-1].answer,
                                 judgments=[Judgment(judge="contain", score=0.0 if wrong_no_read else 1.0)]
                                 if judged else [], gold_chunk_ids=[f"g{i}"]))
    return records


def test_p_disc_is_over_judged_trajectories_and_no_spacy_row_without_spacy(tmp_path):
    from trajscope.analysis.report import build_report

    path = tmp_path / "wh.duckdb"
    ingest_trajectories(path, _rg_runs())
    with open_readonly(path) as con:
        plane = con.execute("SELECT extractor, n_trajectories, n_judged, n_disc, p_disc FROM failure_plane "
                            "WHERE run_id = 'rg-baseline'").fetchall()
        cooc = con.execute("SELECT DISTINCT extractor FROM failure_rg_cooccurrence").fetchall()
        tables = {t.name: t for t in build_report(con, "read-gate", ["rg-baseline", "rg-read_gate"], db_path=path)}
    # Read-Gate §3: P_disc is the share of discipline failures among the evaluated trajectories: 1 of the 4
    # with a verdict (not 1 of 6: the two unjudged are neither failures nor successes).
    assert plane == [("regex", 6, 4, 1, pytest.approx(1 / 4))]  # and no spaCy row: spaCy never ran
    assert cooc == [("regex",)]
    t3 = tables["rg_t3"]
    row = dict(zip([c.key for c in t3.columns], t3.rows[0], strict=True))
    assert row["baseline_discipline"] == pytest.approx(100 * 1 / 4)
    assert row["n"] == 4  # the delta beside it is over the same 4 judged pairs
    assert [r[0] for r in tables["rg_cooc"].rows] == ["regex"]


# ---------------------------------------------------------------------------------------------- item 6


def test_an_unmatched_gold_paragraph_was_never_retrieved(tmp_path):
    """2 supporting paragraphs, 1 matched to a chunk and retrieved (not read), the answer wrong: ER App. E
    counts the unmatched one as never retrieved: missing evidence (hop recall 0.5), and for Read-Gate a
    retrieval failure, not ambiguity."""
    run = Run(run_id="er", dataset="musique", controller="arag", condition="baseline", model="m")
    search = SearchStep(query="x", candidates=[Candidate(chunk_id="g1", rank=1, snippet="about Ann"),
                                               Candidate(chunk_id="n1", rank=2, snippet="noise")])
    read = ReadStep(chunk_ids=["n1"], passages=[Passage(chunk_id="n1", text="noise text")])
    wrong = [Judgment(judge="contain", score=0.0), Judgment(judge="llm", score=0.0, judge_model="j")]
    record = _traj(run, "q1", "Where was Ann born?", "Paris", [search, read, FinalStep(answer="Lyon")], "Lyon",
                   judgments=wrong, gold_chunk_ids=["g1"], gold_paragraphs=2, hop_count=2)
    path = tmp_path / "wh.duckdb"
    ingest_trajectories(path, [record])
    with open_readonly(path) as con:
        erag = con.execute("SELECT label, hop_evidence_recall FROM failure_erag").fetchone()
        rg = con.execute("SELECT label FROM failure_rg WHERE extractor = 'regex'").fetchone()[0]
        facts = con.execute("SELECT all_gold_retrieved, n_gold_unmatched FROM trajectory_forensics").fetchone()
        from trajscope.analysis.report import build_report
        er_t12 = next(t for t in build_report(con, "execution-rag", ["er"], db_path=path) if t.name == "er_t12")
    assert erag == ("missing_evidence", pytest.approx(1 / 2))
    # The share printed beside the failure table: 1 of the 2 paragraphs matched no chunk.
    assert any("1 of 2 supporting paragraphs (50.0%)" in n for n in er_t12.notes), er_t12.notes
    assert rg == "retrieval"
    assert facts == (False, 1)


# ------------------------------------------------------------------------- deviations in table notes


def test_every_deviation_is_documented_and_printed_under_each_table_it_touches(tmp_path):
    import re
    from pathlib import Path

    from fixtures.report.execution_rag import RUNS, build, run_id

    from trajscope.analysis.report import DEVIATIONS, build_report

    docs = (Path(__file__).resolve().parents[1] / "docs" / "definitions.md").read_text()
    section = docs.split("## Deviations, printed under", 1)[1]
    for d in DEVIATIONS:
        assert re.search(rf"\| `{d.key}` \| {re.escape(d.section)} \|", section), d.key
    path = tmp_path / "wh.duckdb"
    ingest_trajectories(path, build())
    ids = [run_id(*s[:4]) for s in RUNS]
    with open_readonly(path) as con:
        tables = {t.name: t for t in build_report(con, "execution-rag", ids, db_path=path)}
    by_key = {d.key: d.note for d in DEVIATIONS}
    # Independently of the patterns in the code: what the paper's tables rest on.
    expected = {
        "er_t9": {"tokens_by_characters"}, "er_t10": {"tokens_by_characters", "hedge_with_explanation"},
        "er_t12": {"gave_up_at_budget", "false_resolution_per_item", "hedge_with_explanation"},
        "er_t13": {"gave_up_at_budget", "false_resolution_per_item", "hop_recall_shared_chunk",
                   "hedge_with_explanation"},
        "er_t1": {"hedge_with_explanation"},
    }
    for name, keys in expected.items():
        for key in keys:
            assert by_key[key] in tables[name].notes, (name, key)
    assert by_key["tokens_by_characters"] not in tables["er_t1"].notes
    # The gold-dependent failure tables carry the unmatched share (the fixture's golds all match).
    assert any(n.startswith("Unmatched gold paragraphs: 0 of ") for n in tables["er_t12"].notes)


# ------------------------------------------------------------------------------------------ items 2, 3


def test_arag_spends_context_as_execution_rag_does_and_says_which_budget_forced_it():
    """Budget 1,000, 100 prompt tokens a call: the cumulative rule (ER App. B) forces the answer once the
    sum passes 1,000, after 11 calls, not after all 15 loops (A-RAG's current-context rule)."""
    from test_controllers_support import mock_server, run_controller

    from trajscope.engine.controllers import get_controller
    from trajscope.engine.mock_llm import reply_text, reply_tool_call

    with mock_server() as server:
        server.extend(reply_tool_call("semantic_search", {"query": f"q{i}"}, tokens_in=100) for i in range(15))
        server.enqueue(reply_text("Frederick Douglass"))
        traj = run_controller(get_controller("arag"), server, params={"context_token_budget": 1_000})
    calls = 1_000 // 100 + 1  # the first call that takes the sum above the budget
    assert traj.metadata["turns"] == calls
    assert traj.end_reason == "context_budget"
    assert traj.metadata["context_budget_rule"] == "cumulative_prompt_tokens"
    assert traj.metadata["context_tokens_seen"] == 100 * (calls + 1)  # and the forced answer's own prompt
    with mock_server() as server:
        server.extend(reply_tool_call("semantic_search", {"query": f"q{i}"}, tokens_in=100) for i in range(15))
        server.enqueue(reply_text("Frederick Douglass"))
        capped = run_controller(get_controller("arag"), server)  # 128k: the 15-loop cap comes first
    assert capped.metadata["turns"] == 15 and capped.end_reason == "loop_cap"


def test_gave_up_is_the_context_budget_not_the_loop_cap(tmp_path):
    """ER App. B: an answer forced at the context budget is Gave Up; at the loop cap it is labelled by the
    evidence rules (here every gold was retrieved: reasoning error)."""
    run = Run(run_id="er", dataset="musique", controller="arag", condition="baseline", model="m")
    search = SearchStep(query="x", candidates=[Candidate(chunk_id="g1", rank=1, snippet="about Ann")])
    wrong = [Judgment(judge="contain", score=0.0), Judgment(judge="llm", score=0.0, judge_model="j")]
    records = [
        _traj(run, reason, "Where was Ann born?", "Paris", [search, ForcedAnswerStep(answer="Lyon")], "Lyon",
              judgments=wrong, end_reason=reason, gold_chunk_ids=["g1"])
        for reason in ("loop_cap", "context_budget", "forced_answer")
    ]
    path = tmp_path / "wh.duckdb"
    ingest_trajectories(path, records)
    with open_readonly(path) as con:
        labels = dict(con.execute("SELECT question_id, label FROM failure_erag").fetchall())
        rg = dict(con.execute("SELECT question_id, label FROM failure_rg WHERE extractor = 'regex'").fetchall())
    assert labels == {"loop_cap": "reasoning_error", "context_budget": "gave_up", "forced_answer": "gave_up"}
    # Read-Gate keeps its four classes for forced answers (no fifth `ended_*` class); this log has no read
    # action, so the gold placed in the results counts as reached: post-gold-read.
    assert rg == {reason: "post_gold_read" for reason in ("loop_cap", "context_budget", "forced_answer")}


def test_report_marks_arms_that_ran_under_different_budget_rules(tmp_path):
    from trajscope.analysis.report import build_report

    records = []
    for controller, condition, meta in (
            ("arag", "baseline", {"context_budget_rule": "cumulative_prompt_tokens", "context_token_budget": 1000}),
            ("execution_rag", "register", {"context_budget_rule": "cumulative_prompt_tokens",
                                           "context_token_budget": 128000}),
            ("arag", "old", {})):
        run = Run(run_id=f"{controller}-{condition}", dataset="musique", controller=controller, condition=condition,
                  model="m")
        t = _traj(run, "q1", "Where was Ann born?", "Paris", [FinalStep(answer="Paris")], "Paris",
                  judgments=[Judgment(judge="contain", score=1.0)])
        records.append(msgspec.structs.replace(t, metadata=meta))
    path = tmp_path / "wh.duckdb"
    ingest_trajectories(path, records)
    with open_readonly(path) as con:
        matched = build_report(con, "execution-rag", ["arag-baseline", "execution_rag-register"], db_path=path)
        old = build_report(con, "execution-rag", ["arag-old", "execution_rag-register"], db_path=path)
    assert any("BUDGET NOT MATCHED on musique" in n and "1000" in n and "128000" in n for n in matched[0].notes)
    assert any(n.startswith("Budget not checked on musique: run(s) arag-old") for n in old[0].notes)


# ---------------------------------------------------------------------------------------------- item 4


def test_ablations_remove_one_component_of_the_register_system():
    """ER Table 2: each ablation is the full system with one component removed, so it runs the same
    (tool-using agent) variant as `register`; only the removed component differs."""
    from trajscope.engine.controllers import get_controller

    full = get_controller("execution_rag", "register").params
    for condition, removed in (("question_only_init", "seed_init"), ("no_updates", "iterative_updates")):
        params = get_controller("execution_rag", condition).params
        assert params["variant"] == full["variant"] == "agent"
        assert {k for k in full if params[k] != full[k]} == {removed}


# ---------------------------------------------------------------------------------------------- item 5


def test_failure_tables_are_named_by_dataset_and_backbone_not_position(tmp_path):
    """ER App. E: Table 12 is MuSiQue under all-MiniLM-L6-v2, Table 14 MuSiQue under Qwen3-Embedding, even
    when 2Wiki runs come first (by position 2Wiki-MiniLM would be Table 12 and MuSiQue-MiniLM Table 14)."""
    from trajscope.analysis.report import build_report
    from trajscope.format import RetrieverSettings

    records, ids = [], []
    for dataset, embedding in (("2wiki", None), ("musique", None), ("musique", "Qwen3-Embedding-0.6B")):
        rid = f"{dataset}-{embedding or 'minilm'}"
        ids.append(rid)
        run = Run(run_id=rid, dataset=dataset, controller="arag", condition="baseline", model="m",
                  retriever=RetrieverSettings(embedding_model=embedding))
        records.append(_traj(run, "q1", "Where was Ann born?", "Paris", [FinalStep(answer="Lyon")], "Lyon",
                             judgments=[Judgment(judge="contain", score=0.0)], gold_chunk_ids=["g1"], hop_count=2))
    path = tmp_path / "wh.duckdb"
    ingest_trajectories(path, records)
    with open_readonly(path) as con:
        tables = {t.name: t for t in build_report(con, "execution-rag", ids, db_path=path)}
    assert "musique" in tables["er_t12"].caption and "all-MiniLM-L6-v2" in tables["er_t12"].caption
    assert "musique" in tables["er_t14"].caption and "Qwen3-Embedding-0.6B" in tables["er_t14"].caption
    assert "er_failures_2wiki_all_minilm_l6_v2" in tables and "er_hops_2wiki_all_minilm_l6_v2" in tables
    assert tables["er_failures_2wiki_all_minilm_l6_v2"].title == "Failures (2wiki, all-MiniLM-L6-v2)"


# --------------------------------------------------------------------------------------------- item 10


def test_every_gate_condition_pairs_with_the_baseline(tmp_path):
    """RG Table 1 / 3 / 4 pair the baseline with the gate; the demo's gate run is `full` (all three gates):
    it pairs too, rather than 'does not apply: no ... read_gate run'."""
    from trajscope.analysis.report import build_report

    records = [t for t in _rg_runs()]
    records = [msgspec.structs.replace(t, run=msgspec.structs.replace(t.run, condition="full", run_id="rg-full"),
                                       trajectory_id=make_trajectory_id("rg-full", t.question.question_id))
               if t.run.condition == "read_gate" else t for t in records]
    path = tmp_path / "wh.duckdb"
    ingest_trajectories(path, records)
    with open_readonly(path) as con:
        tables = {t.name: t for t in build_report(con, "read-gate", ["rg-baseline", "rg-full"], db_path=path)}
    t3 = tables["rg_t3"]
    assert t3.not_applicable is None
    row = dict(zip([c.key for c in t3.columns], t3.rows[0], strict=True))
    # 4 judged pairs: baseline 3 of 4 right, the full gate 4 of 4.
    assert row["dataset"] == "hotpotqa (full)" and row["n"] == 4
    assert (row["no_gate"], row["read_gate"]) == (pytest.approx(75.0), pytest.approx(100.0))
    assert tables["rg_t1"].not_applicable is None and tables["rg_t4"].not_applicable is None


# ------------------------------------------------------------------------- zero-read and halted answers


def test_one_zero_read_rule_and_em_is_the_same_before_and_after_judging(tmp_path):
    """Read-Gate's zero-read final is voluntary (ended on a final with no read); a run without a read action
    has no zero-read rate; a halted trajectory (no answer) is wrong before judging as after."""
    gate = Run(run_id="rg", dataset="hotpotqa", controller="read_gate", condition="baseline", model="m")
    search = SearchStep(query="x", candidates=[Candidate(chunk_id="g1", rank=1, snippet="Paris")])
    read = ReadStep(chunk_ids=["g1"], passages=[Passage(chunk_id="g1", text="Paris.")])
    right = [Judgment(judge="em", score=1.0), Judgment(judge="contain", score=1.0)]
    records = [
        _traj(gate, "q1", "Where is Ann from?", "Paris", [search, FinalStep(answer="Paris")], "Paris",
              judgments=right, question_type="bridge"),                                   # voluntary zero-read
        _traj(gate, "q2", "Where is Ann from?", "Paris", [search, read, FinalStep(answer="Paris")], "Paris",
              judgments=right, question_type="bridge"),
        _traj(gate, "q3", "Where is Ann from?", "Paris", [search], None, end_reason="loop_cap",
              question_type="bridge"),                                                     # halted: no read
    ]
    rag = Run(run_id="rag", dataset="hotpotqa", controller="vanilla_rag", condition="k5", model="m")
    records.append(_traj(rag, "q1", "Where is Ann from?", "Paris", [FinalStep(answer="Paris")], "Paris",
                         judgments=right, question_type="bridge"))
    path = tmp_path / "wh.duckdb"
    ingest_trajectories(path, records)
    with open_readonly(path) as con:
        before = con.execute("SELECT em FROM run_summary WHERE run_id = 'rg'").fetchone()[0]
        summary = con.execute("SELECT zero_read_final_rate FROM run_summary WHERE run_id = 'rg'").fetchone()[0]
        by_type = con.execute("SELECT zero_read_final_rate FROM type_breakdown WHERE run_id = 'rg'").fetchone()[0]
        from trajscope.analysis.report import load_context
        ctx = load_context(con, ["rg", "rag"])
        acc = {r["run_id"]: r["zero_read_final_rate"] for r in ctx.query("rg_accuracy").iter_rows(named=True)}
    judge_run(path, "rg", extractors=("regex",))
    with open_readonly(path) as con:
        after = con.execute("SELECT em FROM run_summary WHERE run_id = 'rg'").fetchone()[0]
    assert summary == pytest.approx(1 / 3) and by_type == pytest.approx(1 / 3)  # q1 only (not q3: forced)
    assert acc == {"rg": pytest.approx(1 / 3), "rag": None}  # no read action: no rate, as run_summary
    assert before == pytest.approx(2 / 3) == after  # q3 gave no answer: 0 before judging as after


# ---------------------------------------------------------------------------------------------- item 9


def test_table9_counts_the_full_texts_the_register_update_prompt_showed(tmp_path):
    """ER §4.7: the register "reads more tokens ... because it builds and updates the register". The agent
    sees c1, c3 (then c2, c4) as search snippets only; the update prompt shows their full texts, so those
    count as retrieved tokens (each chunk once; c2, read later, is counted by its read)."""
    from test_controllers_register_agent import RESOLVE_R1, AgentModel, run_agent
    from test_controllers_support import CORPUS

    from trajscope.engine.mock_llm import reply_tool_call
    from trajscope.format import RegisterUpdateStep

    model = AgentModel([
        reply_tool_call("semantic_search", {"query": "publisher of The North Star"}),
        reply_tool_call("keyword_search", {"keywords": ["Douglass", "married"]}),
        reply_tool_call("read_chunk", {"chunk_id": "c2"}),
        reply_tool_call("final", {"answer": "Helen Pitts"}),
    ], [RESOLVE_R1, {"updates": []}])
    traj, _ = run_agent(model)
    updates = [s for s in traj.steps if isinstance(s, RegisterUpdateStep) and s.phase == "update"]
    assert [u.args["shown_chunk_ids"] for u in updates] == [["c1", "c3"], ["c2", "c4"]]
    run = msgspec.structs.replace(traj.run, dataset="musique", run_id="er")
    traj = msgspec.structs.replace(traj, run=run, trajectory_id=make_trajectory_id("er", "q1"),
                                   question=msgspec.structs.replace(traj.question, dataset="musique"))
    path = tmp_path / "wh.duckdb"
    ingest_trajectories(path, [traj])
    with open_readonly(path) as con:
        tokens = con.execute("SELECT retrieved_tokens FROM run_efficiency").fetchone()[0]
    read = [p for s in traj.steps if isinstance(s, ReadStep) for p in s.passages if p.is_new]
    read_chars = sum(len(p.text) for p in read)
    snippets = sum(len(c.snippet or "") for s in traj.steps if isinstance(s, SearchStep) for c in s.candidates)
    read_ids = {p.chunk_id for p in read}
    assert read_ids == {"c7", "c2"}  # the seed's read and the agent's own
    shown_only = sum(len(CORPUS[c].text) for c in ("c1", "c3", "c4") if c not in read_ids)
    old = (read_chars + snippets) / 4
    assert tokens == pytest.approx((read_chars + snippets + shown_only) / 4)
    assert tokens > old


def test_an_errored_trajectory_counts_in_the_failure_total(tmp_path):
    """ER App. E: percentages are of each method's own failures; an errored (wrong) trajectory is one of
    them, in its own row, not silently dropped (which would give Total 1, missing evidence 100%)."""
    from trajscope.analysis.report import DEVIATIONS, build_report

    run = Run(run_id="er", dataset="musique", controller="arag", condition="baseline", model="m")
    wrong = [Judgment(judge="contain", score=0.0)]
    records = [
        _traj(run, "q1", "Where was Ann born?", "Paris", [FinalStep(answer="Lyon")], "Lyon", judgments=wrong,
              gold_chunk_ids=["g1"], hop_count=2),
        # As trajscope judge scores it: no answer, contain 0.
        _traj(run, "q2", "Where was Bo born?", "Rome", [], None, judgments=wrong, end_reason="error",
              gold_chunk_ids=["g2"], hop_count=2),
    ]
    path = tmp_path / "wh.duckdb"
    ingest_trajectories(path, records)
    with open_readonly(path) as con:
        t12 = next(t for t in build_report(con, "execution-rag", ["er"], db_path=path) if t.name == "er_t12")
    rows = {r[0]: r[1:] for r in t12.rows}
    assert rows["Total"] == (2, pytest.approx(100.0))
    assert rows["Missing Evidence"] == (1, pytest.approx(50.0))
    assert rows["Error (run failed)"] == (1, pytest.approx(50.0))
    note = next(d.note for d in DEVIATIONS if d.key == "error_label")
    assert note in t12.notes


def _audit_record(qid: str, gold: str, contexts: dict[str, str], f1: dict[str, float], aliases=()) -> object:
    from trajscope.format import AuditRecord, ReaderOutput

    return AuditRecord(audit_id="audit-x", cell="S", dataset="2wiki", question_id=qid, question=f"{qid}?",
                       gold=gold, aliases=list(aliases), reader_model="r", contexts=contexts,
                       outputs=[ReaderOutput(baseline=b, answer="a", f1=v) for b, v in f1.items()])


def test_the_answer_in_context_flag_counts_a_normalised_alias(tmp_path):
    """AP §11: the indicator is "substring presence of any normalised gold alias". A context naming the
    gold only as its alias "U.S.A." has the answer; the literal gold "United States" is not in it."""
    import numpy as np
    import statsmodels.api as sm

    from trajscope.analysis.report import build_report
    from trajscope.warehouse.audit import load_audit_records

    alias_text = "Ann moved to the U.S.A. in 1990."
    specs = [  # (b1 context, b2 context, F1 b1, F1 b2)
        ("Ann lived in Lyon.", alias_text, 0.1, 0.9),
        ("Ann lived in Lyon for years.", "Ann went to the United States.", 0.2, 0.8),
        ("Ann is a painter.", "Ann paints.", 0.3, 0.2),
        ("Ann moved to the United States.", alias_text + " She stayed.", 0.7, 0.9),
        ("Bo lived in Rome.", "Bo is in Rome, a city.", 0.1, 0.3),
        ("Bo went to USA.", "Bo paints in Lyon.", 0.8, 0.1),
    ]
    records = [_audit_record(f"q{i}", "United States", {"b1": b1, "b2": b2}, {"b1": f1, "b2": f2}, ["USA"])
               for i, (b1, b2, f1, f2) in enumerate(specs)]
    path = tmp_path / "wh.duckdb"
    load_audit_records(path, records)
    with open_readonly(path) as con:
        ols = next(t for t in build_report(con, "audit", [], db_path=path) if t.name == "au_ols")
    coef = {r[1]: r[2] for r in ols.rows}
    y, x, groups = [], [], []
    for i, (b1, b2, f1, f2) in enumerate(specs):
        for setting, text, f in ((0.0, b1, f1), (1.0, b2, f2)):
            log_len = np.log(1 + len(text.split()))
            lowered = text.lower().replace(".", "")
            present = "united states" in lowered or "usa" in lowered  # the alias, normalised: U.S.A. -> usa
            y.append(f)
            x.append([1.0, setting, log_len, float(present), setting * log_len])
            groups.append(i)
    fit = sm.OLS(np.array(y), np.array(x)).fit(cov_type="cluster", cov_kwds={"groups": np.array(groups)})
    assert coef["ans_in"] == pytest.approx(fit.params[3], abs=1e-9)
    literal = [float("united states" in t.lower()) for b1, b2, *_ in specs for t in (b1, b2)]
    old = sm.OLS(np.array(y), np.column_stack([np.array(x)[:, :3], literal, np.array(x)[:, 4]])).fit()
    assert abs(old.params[3] - fit.params[3]) > 0.05  # the two definitions give different numbers


def test_the_all_action_oracle_headroom_is_over_raw_retrieval(tmp_path):
    """AP §13: the 2-action oracle's headroom is over the better single policy, the all-action oracle's
    "over raw". F1 per record (b1, b2, b3): the best single policy b2 (0.55), raw 0.3, all-oracle 0.7."""
    from trajscope.analysis.report import build_report
    from trajscope.warehouse.audit import load_audit_records

    f1s = [(0.2, 0.6, 0.8), (0.4, 0.5, 0.1), (0.1, 0.6, 0.2), (0.5, 0.5, 0.7)]
    records = [_audit_record(f"q{i}", "Paris", {"b1": "x", "b2": "y", "b3": "z"},
                             {"b1": a, "b2": b, "b3": c}) for i, (a, b, c) in enumerate(f1s)]
    path = tmp_path / "wh.duckdb"
    load_audit_records(path, records)
    with open_readonly(path) as con:
        table = next(t for t in build_report(con, "audit", [], db_path=path) if t.name == "au_oracle")
    row = dict(zip([c.key for c in table.columns], table.rows[0], strict=True))
    raw, best = sum(r[0] for r in f1s) / 4, sum(r[1] for r in f1s) / 4
    oracle_all = sum(max(r) for r in f1s) / 4
    assert row["best"] == "b2" and row["best_f1"] == pytest.approx(100 * best)
    assert row["gap_all"] == pytest.approx(100 * (oracle_all - raw))  # 40.0, not 100 * (0.7 - 0.55) = 15.0
    assert row["gap_all"] != pytest.approx(100 * (oracle_all - best))


def test_a_tie_between_two_judges_is_correct_in_mcnemar_and_in_metric_llm(tmp_path):
    """says_correct: a verdict >= 0.5 is correct. Two judges split 1 / 0 (mean 0.5) on A's answer, both say
    wrong on B's: A was right and B broke it, in `compare --metric llm` as in `correct`, not
    the means 0.5 / 0 with no McNemar at all, nor transition_table split at > 0.5 (A wrong)."""
    import numpy as np

    from trajscope.analysis.queries import compare_runs
    from trajscope.analysis.stats import transition_table

    cells = transition_table(["q1", "q2"], np.array([0.5, 1.0]), np.array([0.0, 1.0]))
    assert (cells.a_only, cells.both_right) == (["q1"], ["q2"])
    records = []
    for rid, verdicts in (("a", (1.0, 0.0)), ("b", (0.0, 0.0))):
        run = Run(run_id=rid, dataset="hotpotqa", controller="arag", condition=rid, model="m")
        judgments = [Judgment(judge="llm", score=v, judge_model=f"j{k}") for k, v in enumerate(verdicts)]
        records.append(_traj(run, "q1", "Where is Ann from?", "Paris", [FinalStep(answer="Paris")], "Paris",
                             judgments=judgments))
    path = tmp_path / "wh.duckdb"
    ingest_trajectories(path, records)
    with open_readonly(path) as con:
        by_llm = compare_runs(con, "a", "b", metric="llm").overall
        by_correct = compare_runs(con, "a", "b").overall
    assert (by_llm.accuracy_a, by_llm.accuracy_b) == (1.0, 0.0)
    assert by_llm.mcnemar is not None and (by_llm.mcnemar.a_only, by_llm.mcnemar.b_only) == (1, 0)
    assert (by_correct.mcnemar.a_only, by_correct.mcnemar.b_only) == (1, 0)


def test_the_audit_reader_f1_follows_the_chosen_rule(tmp_path):
    """HotpotQA's official F1: "yes it is" against gold "yes" scores 0 (SQuAD's rule: 0.5)."""
    from trajscope.engine.audit import AuditSpec, run_audit
    from trajscope.engine.llm import resolve_model
    from trajscope.engine.mock_llm import MockLLMServer
    from trajscope.format import Chunk, read_audit_records
    from trajscope.ingest.datasets import Dataset

    dataset = Dataset(
        name="yn", questions=[Question(question_id="q1", text="Is Vellmar a river town?", gold_answer="yes",
                                       dataset="yn")],
        chunks=[Chunk(chunk_id="p1", title="Vellmar", text="Vellmar is a river town.", dataset="yn")],
        gold_match_rate=0.0, n_gold=0, n_gold_matched=0, source="fixture", contexts={"q1": ["p1"]})

    def reply(request):
        text = request.messages[-1]["content"]
        return "Vellmar lies on a river." if not text.startswith("Context:") else "yes it is"

    f1 = {}
    with MockLLMServer(reply) as server:
        config = resolve_model(server.model_spec).with_overrides(max_retries=0)
        for rule in ("squad", "hotpotqa"):
            spec = AuditSpec(dataset="yn", out_dir=tmp_path / rule, db_path=None, cache=False, progress=False,
                             f1_rule=rule, question_blind=rule == "hotpotqa")
            run_audit(spec, dataset, model_configs={"compiler_a": config, "compiler_b": config, "reader": config})
            (record,) = read_audit_records(spec.log_path())
            f1[rule] = {o.baseline: o.f1 for o in record.outputs if o.intervention == "none"}
            assert record.metadata["f1_rule"] == rule
    assert f1["squad"]["b1"] == pytest.approx(0.5) and f1["hotpotqa"]["b1"] == 0.0
    with pytest.raises(ValueError, match="unknown f1_rule"):
        AuditSpec(dataset="yn", f1_rule="trec")


# --------------------------------------------------------------------------------------------- item 10


def test_a_question_blind_compile_fills_table_10_from_the_engine(tmp_path):
    """AP §14: b2 and b3 compiled again without the question; the blind compile never names the answer
    here, the question-conditioned one does: containment 100% with the question, 0% blind."""
    from trajscope.analysis.report import build_report
    from trajscope.engine.audit import AuditSpec, run_audit
    from trajscope.engine.llm import resolve_model
    from trajscope.engine.mock_llm import MockLLMServer
    from trajscope.format import Chunk, read_audit_records
    from trajscope.ingest.datasets import Dataset

    dataset = Dataset(
        name="qb", questions=[Question(question_id=f"q{i}", text=f"Who founded Vellmar {i}?", gold_answer="Ada Brenn",
                                       dataset="qb") for i in range(3)],
        chunks=[Chunk(chunk_id="p1", title="Vellmar", text="Vellmar's founder was Ada Brenn.", dataset="qb")],
        gold_match_rate=0.0, n_gold=0, n_gold_matched=0, source="fixture",
        contexts={f"q{i}": ["p1"] for i in range(3)})
    prompts = []

    def reply(request):
        text = request.messages[-1]["content"]
        prompts.append(text)
        if text.startswith("Context:"):
            return "Ada Brenn"
        return "Ada Brenn founded Vellmar." if "Query:" in text else "Vellmar is a town."

    with MockLLMServer(reply) as server:
        config = resolve_model(server.model_spec).with_overrides(max_retries=0)
        spec = AuditSpec(dataset="qb", out_dir=tmp_path / "runs", db_path=tmp_path / "wh.duckdb", cache=False,
                         progress=False, cell="S", question_blind=True)
        run_audit(spec, dataset, model_configs={"compiler_a": config, "compiler_b": config, "reader": config})
    records = read_audit_records(spec.log_path())
    assert all({"b2_blind", "b3_blind"} <= set(r.contexts) for r in records)
    assert not any(o.baseline.endswith("_blind") for r in records for o in r.outputs)  # containment only
    blind_prompts = [p for p in prompts if p.startswith("Identify all facts") and "Query:" not in p]
    assert len(blind_prompts) == 2 * len(records) and not any("Who founded" in p for p in blind_prompts)
    assert spec.resolved_audit_id() != AuditSpec(dataset="qb", cell="S").resolved_audit_id()
    with open_readonly(spec.db_path) as con:
        table = next(t for t in build_report(con, "audit", [], db_path=spec.db_path) if t.name == "au_blind")
    rows = {r[1]: dict(zip([c.key for c in table.columns], r, strict=True)) for r in table.rows}
    assert set(rows) == {"b2", "b3"}
    assert (rows["b2"]["with_question"], rows["b2"]["blind"], rows["b2"]["n"]) == (100.0, 0.0, 3)


def test_figure_6_counts_gate_corrections_per_question(tmp_path):
    """RG App. F, Figure 6: corrections per question are the finals the gate refused. The +lowev run refuses
    q0 twice and q1 once, q2 never: 1.0 per question, 2 of 3 corrected; the baseline none."""
    import vl_convert

    from trajscope.analysis.report import build_report, report_figures

    search = SearchStep(query="x", candidates=[Candidate(chunk_id="g", rank=1, snippet="Paris")])
    read = ReadStep(chunk_ids=["g"], passages=[Passage(chunk_id="g", text="Ann Lee is from Paris.")])
    right = [Judgment(judge="contain", score=1.0)]
    records = []
    for condition, rejections in (("baseline", (0, 0, 0)), ("lowev", (2, 1, 0))):
        run = Run(run_id=f"rg-{condition}", dataset="hotpotqa", controller="read_gate", condition=condition,
                  model="m")
        for i, k in enumerate(rejections):
            refused = [GateRejectionStep(gate="lowev", rejected_answer="Lyon") for _ in range(k)]
            answer = "Paris" if condition == "lowev" or i else "Lyon"
            records.append(_traj(run, f"q{i}", "Where is Ann Lee from?", "Paris",
                                 [search, read, *refused, FinalStep(answer=answer)], answer,
                                 judgments=right if answer == "Paris" else [Judgment(judge="contain", score=0.0)]))
    path = tmp_path / "wh.duckdb"
    ingest_trajectories(path, records)
    with open_readonly(path) as con:
        tables = build_report(con, "read-gate", ["rg-baseline", "rg-lowev"], db_path=path)
    fig6 = next(t for t in tables if t.name == "rg_fig6")
    rows = {r[1]: dict(zip([c.key for c in fig6.columns], r, strict=True)) for r in fig6.rows}
    assert rows["lowev"]["corrections"] == pytest.approx((2 + 1 + 0) / 3)
    assert rows["lowev"]["corrected"] == pytest.approx(100 * 2 / 3)
    assert rows["lowev"]["turns"] == pytest.approx((3 * 3 + 2 + 1 + 0) / 3)  # search, read, final + refusals
    assert rows["baseline"]["corrections"] == 0.0
    assert rows["lowev"]["accuracy"].value == pytest.approx(100.0)
    assert rows["lowev"]["accuracy"].delta == pytest.approx(100.0 - 100 * 2 / 3)
    (figure,) = [f for f in report_figures(tables) if f.name == "rg_fig6"]
    drawn = {v["condition"]: v["corrections"] for v in figure.spec["data"]["values"]}
    assert drawn == {"baseline": 0.0, "lowev": pytest.approx(1.0)}
    assert vl_convert.vegalite_to_svg(figure.spec).startswith("<svg")


def test_execution_rag_figures_2_and_5_draw_their_tables(tmp_path):
    """ER Figure 2 is Table 13 stacked (each method's failure shares per hop sum to 100); Figure 5 is
    Tables 3-8 in one, Contain-Acc and LLM-Acc per category and backbone."""
    import vl_convert
    from fixtures.report.execution_rag import RUNS, build, run_id

    from trajscope.analysis.report import build_report, report_figures

    path = tmp_path / "wh.duckdb"
    ingest_trajectories(path, build())
    with open_readonly(path) as con:
        tables = build_report(con, "execution-rag", [run_id(*s[:4]) for s in RUNS], db_path=path)
    by_name = {t.name: t for t in tables}
    figures = {f.name: f for f in report_figures(tables)}
    fig2 = figures["er_fig2"].spec["data"]["values"]
    sums = defaultdict(float)
    for v in fig2:
        sums[(v["hop"], v["method"])] += v["share"]
    assert sums and all(s == pytest.approx(100.0) for s in sums.values())
    t13 = {(r[0], r[1]): r[2] for r in by_name["er_t13"].rows}
    assert {(v["hop"], v["method"]): v["failures"] for v in fig2} == t13
    fig5 = {(v["panel"], v["category"], v["metric"]): v["accuracy"] for v in figures["er_fig5"].spec["data"]["values"]}
    t3 = {r[0]: (r[2], r[3]) for r in by_name["er_t3"].rows}  # MuSiQue by hop, all-MiniLM-L6-v2
    for category, (contain, llm) in t3.items():
        assert fig5[("musique (all-MiniLM-L6-v2)", category, "Contain-Acc")] == contain
        assert fig5[("musique (all-MiniLM-L6-v2)", category, "LLM-Acc")] == llm
    for name in ("er_fig2", "er_fig5"):
        assert vl_convert.vegalite_to_svg(figures[name].spec).startswith("<svg")


def test_audit_reader_scale_and_length_quartiles(tmp_path):
    """AP §8 (Table 4): the paired B2 − B1 delta per reader, readers by parameter count (0.5B before 7B before
    72B, whatever the cell names); AP §12 (Table 8): B3 − B2 by quartile of the pooled context lengths."""
    import numpy as np

    from trajscope.analysis.audit import paired_bootstrap
    from trajscope.analysis.report import build_report
    from trajscope.format import AuditRecord, ReaderOutput
    from trajscope.warehouse.audit import load_audit_records

    records = []
    for cell, reader, lift in (("A", "Qwen2.5-72B-Instruct", 0.01), ("B", "Qwen2.5-0.5B-Instruct", 0.3),
                               ("C", "Qwen2.5-7B-Instruct", 0.1)):
        for i in range(8):
            f1 = {"b1": 0.1 * (i % 4), "b2": 0.1 * (i % 4) + lift + 0.01 * i, "b3": 0.05 * i}
            contexts = {"b1": "raw " * (12 + 3 * (i % 3)) + ("Paris" if i % 3 == 0 else ""),
                        "b2": "word " * (5 + 10 * i) + ("Paris" if i % 2 else ""), "b3": "word " * (10 + 7 * i)}
            records.append(AuditRecord(
                audit_id=f"audit-{cell}", cell=cell, dataset="hotpotqa", question_id=f"q{i}", question="Q?",
                gold="Paris", reader_model=reader, contexts=contexts,
                outputs=[ReaderOutput(baseline=b, answer="a", f1=round(v, 6)) for b, v in f1.items()]))
    path = tmp_path / "wh.duckdb"
    load_audit_records(path, records)
    with open_readonly(path) as con:
        tables = {t.name: t for t in build_report(con, "audit", [], db_path=path)}
    t4 = [dict(zip([c.key for c in tables["au_t4"].columns], r, strict=True)) for r in tables["au_t4"].rows]
    assert [r["reader"] for r in t4] == ["Qwen2.5-0.5B-Instruct", "Qwen2.5-7B-Instruct", "Qwen2.5-72B-Instruct"]
    for row in t4:
        recs = [r for r in records if r.cell == row["cell"]]
        diff = np.array([next(o.f1 for o in r.outputs if o.baseline == "b2")
                         - next(o.f1 for o in r.outputs if o.baseline == "b1") for r in recs])
        ci = paired_bootstrap(diff).scaled(100)
        assert row["n"] == 8 and row["delta"].value == pytest.approx(100 * diff.mean())
        assert (row["delta"].low, row["delta"].high) == pytest.approx((ci.low, ci.high))
    # Table 8, cell A, B3 against B2: quartiles of the 16 pooled lengths, worked out by hand.
    recs = [r for r in records if r.cell == "A"]
    pooled = [(len(r.contexts[b].split()), b, next(o.f1 for o in r.outputs if o.baseline == b))
              for r in recs for b in ("b2", "b3")]
    lengths = sorted(n for n, _, _ in pooled)
    cuts = np.quantile(lengths, [0.25, 0.5, 0.75])
    expected = {}
    for q in range(4):
        def inside(n, q=q):
            return (q == 0 or n > cuts[q - 1]) and (q == 3 or n <= cuts[q])
        ref = [f for n, b, f in pooled if b == "b2" and inside(n)]
        own = [f for n, b, f in pooled if b == "b3" and inside(n)]
        if ref and own:
            expected[f"Q{q + 1}"] = 100 * (np.mean(own) - np.mean(ref))
    t8 = {r[2]: r[-1] for r in tables["au_t8"].rows if r[0] == "A" and r[1] == "b3"}
    assert t8.keys() == expected.keys() and len(t8) >= 2
    for q, delta in expected.items():
        assert t8[q] == pytest.approx(delta)
