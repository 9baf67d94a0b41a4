"""Capability profiles in the warehouse: recorded or inferred with a reason, honoured by every view that needs one."""
from __future__ import annotations

import pytest
from fixtures.forensics.builders import final, read, search, trajectory

from trajscope.engine.judge_pass import judge_run
from trajscope.format import Capabilities, ErrorStep, ForcedAnswerStep, Judgment, Run
from trajscope.warehouse import ingest_trajectories, open_readonly

Q = "Where was Scott Derrickson born?"
G1 = ("hp-g1", "Scott Derrickson was born in Denver, Colorado.")
N1 = ("hp-n1", "Scott Derrickson directed Sinister.")
NO_READ_ACTION = "no read action in this log: discipline metrics do not apply"


def _wrong(run: Run, qid: str, steps: list, **kw) -> object:
    return trajectory(run, qid, Q, "Denver", steps, gold_chunks=(G1[0],), judgments=(Judgment(judge="llm", score=0.0,
                      judge_model="fixture-judge"),), **kw)


def _records() -> list:
    reader = Run(run_id="reader", dataset="fx")  # reads in its log: read action inferred
    web = Run(run_id="web", dataset="fx")  # a web agent: search results only, nothing declares a read tool
    declared = Run(run_id="declared", dataset="fx", capabilities=Capabilities(
        read_action=False, gold_passages=True, declared=["read_action"],
        reasons={"read_action": "declared by the user: its search returns whole pages"}))
    no_tool = Run(run_id="vrag", dataset="fx", config={"read_action": False})
    ends = Run(run_id="ends", dataset="fx", config={"read_action": True})
    return [
        _wrong(reader, "r_no_read", [search((G1[0], "Scott Derrickson was born")), final("Boulder")]),
        _wrong(reader, "r_read", [search((N1[0], "Sinister")), read(N1), final("Boulder")]),
        _wrong(web, "w1", [search((G1[0], "Scott Derrickson was born in Denver")), final("Boulder")]),
        _wrong(web, "w2", [search((N1[0], "Sinister")), final("Austin")]),
        _wrong(declared, "d1", [search((N1[0], "Sinister")), read(N1), final("Boulder")]),
        _wrong(no_tool, "v1", [search((N1[0], "Sinister")), final("Boulder")]),
        _wrong(ends, "e_budget", [search((N1[0], "Sinister")), ForcedAnswerStep(answer="Austin")], end_reason="budget"),
        _wrong(ends, "e_forced", [search((N1[0], "Sinister")), ForcedAnswerStep(answer="Austin")],
               end_reason="forced_answer"),
        _wrong(ends, "e_error", [search((N1[0], "Sinister")), ErrorStep(error_type="model_error:http", message="500")],
               end_reason="error", answer=None),
        # An error trajectory that carries no error step still counts as one error.
        _wrong(ends, "e_error_bare", [search((N1[0], "Sinister"))], end_reason="error", answer=None),
        _wrong(ends, "e_final", [search((N1[0], "Sinister")), final("Boulder")]),
    ]


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("caps") / "w.duckdb"
    ingest_trajectories(path, _records())
    judge_run(path, "ends", extractors=("regex",))
    return path


def _query(db, sql: str) -> list[tuple]:
    with open_readonly(db) as con:
        return con.execute(sql).fetchall()


def test_read_action_is_recorded_declared_or_inferred_with_its_reason(db):
    got = {r[0]: r[1:] for r in _query(
        db, "SELECT run_id, read_action, read_action_reason, profile_source FROM run_capabilities")}
    assert got["reader"][:2] == (True, "inferred: 1 of 2 trajectories have read steps")
    # No read step and nothing declares one: unknown, not "had a read action and never used it".
    assert got["web"][:2] == (None, "inferred: no read action in this log: no read step, and nothing declares one")
    assert got["declared"] == (False, "declared by the user: its search returns whole pages",
                               "recorded by the log, unset capabilities inferred")
    assert got["vrag"][0] is False and "config.read_action = false" in got["vrag"][1]
    assert got["ends"][0] is True and got["web"][2] == "inferred at load (the log records no profile)"


def test_other_capabilities_are_inferred_from_the_data(db):
    (row,) = _query(db, "SELECT search_candidates, snippets, gold_answers, gold_passages, judgments, inferred, "
                        "declared FROM run_capabilities WHERE run_id = 'declared'")
    assert row[:5] == (True, True, True, True, True)
    assert row[5] == ["search_candidates", "snippets", "gold_answers", "judgments"] and row[6] == ["read_action"]


def test_no_read_action_means_no_discipline_label_and_the_reason(db):
    rows = _query(db, "SELECT run_id, question_id, label, discipline_subtype, is_discipline, no_read, does_not_apply "
                      "FROM failure_rg WHERE run_id IN ('web', 'declared', 'vrag') AND extractor = 'regex' "
                      "ORDER BY 1, 2")
    assert [r[:2] for r in rows] == [("declared", "d1"), ("vrag", "v1"), ("web", "w1"), ("web", "w2")]
    for _run_id, qid, label, subtype, is_discipline, no_read, reason in rows:
        assert label != "discipline" and subtype is None and is_discipline is None and no_read is None, qid
        assert reason == NO_READ_ACTION
    # The gold placed in the results counts as gold seen; a run that never met the gold missed it.
    assert {r[1]: r[2] for r in rows} == {"d1": "retrieval", "v1": "retrieval", "w1": "post_gold_read",
                                          "w2": "retrieval"}
    reader = dict(_query(db, "SELECT question_id, discipline_subtype FROM failure_rg "
                             "WHERE run_id = 'reader' AND extractor = 'regex'"))
    assert reader["r_no_read"] == "no_read_final"


def test_failure_plane_and_cooccurrence_give_null_with_the_reason(db):
    rows = _query(db, "SELECT run_id, n_disc, p_disc, p_disc_reason, p_post FROM failure_plane "
                      "WHERE extractor = 'regex' ORDER BY run_id")
    plane = {r[0]: r[1:] for r in rows}
    for run_id in ("web", "declared", "vrag"):
        assert plane[run_id][:3] == (None, None, NO_READ_ACTION), run_id
        assert plane[run_id][3] is not None  # the post-gold axis still applies: gold passages exist
    assert plane["reader"][:2] == (1, 0.5) and plane["reader"][2] is None
    (co,) = _query(db, "SELECT discipline_only, neither, neither_share, does_not_apply FROM failure_rg_cooccurrence "
                       "WHERE run_id = 'web' AND extractor = 'regex'")
    assert co == (None, None, None, NO_READ_ACTION)


def test_trajectories_that_did_not_end_on_a_final_keep_the_four_classes_and_say_how_they_ended(db):
    """RG §3 partitions every wrong trajectory into four classes: an answer forced (or cut by an error) without
    a read is a no-read discipline failure like a voluntary one; how it ended is a flag, never a fifth class."""
    labels = {r[0]: r[1:] for r in _query(
        db, "SELECT question_id, label, discipline_subtype, forced_end, does_not_apply FROM failure_rg "
            "WHERE run_id = 'ends' AND extractor = 'regex'")}
    assert labels["e_budget"][:3] == ("discipline", "no_read_final", "ended_budget")
    assert labels["e_forced"][:3] == ("discipline", "no_read_final", "ended_forced_answer")
    assert labels["e_error"][:3] == ("discipline", "no_read_final", "ended_error")
    assert labels["e_final"][:3] == ("discipline", "no_read_final", None)
    assert all(v[3] is None for v in labels.values())  # the agent could read: discipline applies to every end
    erag = dict(_query(db, "SELECT question_id, label FROM failure_erag WHERE run_id = 'ends'"))
    assert erag["e_error"] == erag["e_error_bare"] == "error" and erag["e_budget"] == "gave_up"


def test_error_trajectories_count_in_run_summary_errors(db):
    (row,) = _query(db, "SELECT errors, error_trajectories FROM run_summary WHERE run_id = 'ends'")
    assert row == (2, 2)  # one error step, plus the error trajectory that has none


def _no_gold(run: Run, qid: str) -> object:
    t = trajectory(run, qid, Q, "", [search((N1[0], "Sinister")), read(N1), final("Boulder")])
    t.question.gold_answer = None
    return t


def test_no_verdict_without_a_gold_answer(tmp_path):
    db = tmp_path / "w.duckdb"
    run = Run(run_id="nogold", dataset="fx")
    ingest_trajectories(db, [_no_gold(run, "n1"), _no_gold(run, "n2"),
                             trajectory(run, "g1", Q, "Denver", [search(G1), read(G1), final("Boulder")])])
    report = judge_run(db, "nogold", extractors=("regex",))
    assert report.no_gold_skipped == 2 and report.lexical_added == 3  # em, f1, contain for g1 only
    assert "2 not judged: their question has no gold answer" in report.summary()
    rows = dict(_query(db, "SELECT question_id, correct_reason FROM trajectory_correctness WHERE run_id = 'nogold'"))
    assert rows == {"n1": "no gold answer for this question: correctness does not apply",
                    "n2": "no gold answer for this question: correctness does not apply", "g1": None}
    assert _query(db, "SELECT count(*) FROM judgments j JOIN trajectories t USING (trajectory_id) "
                      "WHERE t.question_id IN ('n1', 'n2')") == [(0,)]
    # Not judged means not wrong: neither taxonomy labels them.
    assert _query(db, "SELECT DISTINCT question_id FROM failure_rg WHERE run_id = 'nogold'") == [("g1",)]
    (row,) = _query(db, "SELECT em, scores_reason FROM run_summary WHERE run_id = 'nogold'")
    assert row == (0.0, None)


def test_a_run_without_any_gold_has_no_scores_and_says_why(tmp_path):
    db = tmp_path / "w.duckdb"
    run = Run(run_id="nogold", dataset="fx")
    ingest_trajectories(db, [_no_gold(run, "n1")])
    judge_run(db, "nogold", extractors=("regex",))
    (row,) = _query(db, "SELECT em, f1, contain_acc, scores_reason FROM run_summary")
    assert row == (None, None, None, "inferred: no gold answers in this log: correctness, EM and F1 do not apply")
    (ev,) = _query(db, "SELECT all_gold_retrieved, any_gold_read, evidence_recall, evidence_reason "
                       "FROM trajectory_evidence")
    assert ev == (None, None, None, "no gold passages for this question: gold-evidence measures do not apply")


def test_failed_reads_are_counted_apart_from_reads_that_returned_a_passage(tmp_path):
    from trajscope.format import ReadStep

    db = tmp_path / "w.duckdb"
    run = Run(run_id="r", dataset="fx")
    missing = ReadStep(chunk_ids=["nope"], passages=[], observation="unknown chunk id nope")
    ingest_trajectories(db, [trajectory(run, "q", Q, "Denver", [search(G1), missing, read(G1), missing,
                                                                final("Denver")])])
    assert _query(db, "SELECT read_count, failed_read_count FROM trajectory_facts") == [(1, 2)]


def test_type_breakdown_zero_read_final_rate_applies_only_to_runs_with_a_read_action(db):
    rows = _query(db, "SELECT run_id, zero_read_final_rate, zero_read_reason FROM type_breakdown ORDER BY run_id")
    got = {r[0]: r[1:] for r in rows}
    assert got["reader"] == (0.5, None)  # one of its two trajectories read nothing
    for run_id in ("web", "declared", "vrag"):
        rate, reason = got[run_id]
        assert rate is None and reason, run_id
    (summary_reason,) = _query(db, "SELECT zero_read_reason FROM run_summary WHERE run_id = 'declared'")[0]
    assert got["declared"][1] == summary_reason == "declared by the user: its search returns whole pages"


def test_llm_acc_is_one_definition_in_every_view(tmp_path):
    # Two judge models disagree on q2: its mean verdict 0.5 says correct (a tie is right), as `correct` reads it.
    run = Run(run_id="two_judges", dataset="fx")

    def judged(qid, verdicts):
        return trajectory(run, qid, Q, "Denver", [search(G1), read(G1), final("Denver")], gold_chunks=(G1[0],),
                          judgments=tuple(Judgment(judge="llm", score=v, judge_model=f"j{i}")
                                          for i, v in enumerate(verdicts)), hop_count=2)

    path = tmp_path / "w.duckdb"
    ingest_trajectories(path, [judged("q1", (1.0, 1.0)), judged("q2", (1.0, 0.0)), judged("q3", (0.0, 0.0))])
    values = [_query(path, f"SELECT llm_acc FROM {view} WHERE run_id = 'two_judges'")[0][0]
              for view in ("run_summary", "run_efficiency", "type_breakdown", "hop_breakdown")]
    (accuracy,) = _query(path, "SELECT avg(CAST(correct AS DOUBLE)) FROM trajectory_correctness")[0]
    assert values == [pytest.approx(2 / 3)] * 4 and accuracy == pytest.approx(2 / 3)


def test_a_run_with_no_verdict_has_no_place_on_the_failure_plane(tmp_path):
    # A failure is a wrong answer: before any verdict, the shares of failures are unknown, not 0.
    run = Run(run_id="unjudged", dataset="fx")
    unjudged = [trajectory(run, q, Q, "Denver", [search(G1), read(G1), final("Boulder")], gold_chunks=(G1[0],))
                for q in ("u1", "u2")]
    path = tmp_path / "w.duckdb"
    ingest_trajectories(path, unjudged)
    rows = _query(path, "SELECT n_judged, n_disc, p_disc, p_post, p_disc_reason, p_post_reason FROM failure_plane "
                        "WHERE extractor = 'regex'")
    assert rows == [(0, None, None, None, "no trajectory has a verdict (not judged yet: run trajscope judge)",
                     "no trajectory has a verdict (not judged yet: run trajscope judge)")]
    judge_run(path, "unjudged", extractors=("regex",))
    (n_judged, n_disc, p_post) = _query(path, "SELECT n_judged, n_disc, p_post FROM failure_plane "
                                              "WHERE extractor = 'regex'")[0]
    assert (n_judged, n_disc, p_post) == (2, 0, 1.0)  # both read the gold passage and are wrong
