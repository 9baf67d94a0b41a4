"""Forks in the warehouse: children ingested with their parent and step, the fork views' rescue counts and
the rescue statistics, each checked against an independent computation (the logs by hand, statsmodels)."""
from __future__ import annotations

import numpy as np
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.proportion import proportion_confint
from test_controllers_support import CORPUS, mock_server
from test_forks import fork, run_parent

from trajscope.analysis.stats import fork_rescue_stats
from trajscope.engine.forks import fork_many, load_parent, select_parents
from trajscope.engine.mock_llm import reply_tool_call
from trajscope.format import ForkOrigin, Question
from trajscope.warehouse import open_readonly

QUESTIONS = [Question(question_id=f"q{i}", text=f"Who married the publisher of The North Star? (case {i})",
                      gold_answer="Helen Pitts Douglass", gold_chunk_ids=["c2"]) for i in range(6)]


def agent(request):
    """search -> read c1 -> final. Case 2 is never right; cases 4 and 5 are right from c1 alone, and case 5
    is wrong once it has read c2 (so a gold read can break it)."""
    tools = sum(1 for m in request.messages if m["role"] == "tool")
    seen = "\n".join(str(m.get("content") or "") for m in request.messages)
    case = int(seen.split("(case ")[1][0])
    if tools == 0:
        return reply_tool_call("search", {"query": "North Star publisher"})
    if tools == 1:
        return reply_tool_call("read", {"chunk_id": "c1"})
    # A passage read (its "[id] title" header), not a snippet in the search results.
    has_c1, has_c2 = (f"[{c}] {CORPUS[c].title}\n" in seen for c in ("c1", "c2"))
    right = (case in (4, 5) and has_c1) or (has_c2 and case not in (2, 5))
    return reply_tool_call("final", {"answer": "Helen Pitts Douglass" if right else "Anna Murray"})


def right(answer):
    return "helen pitts douglass" in (answer or "").lower()


def test_fork_views_and_rescue_statistics_match_the_logs_and_statsmodels(tmp_path):
    db = tmp_path / "w.duckdb"
    with mock_server(agent) as server:
        parents = run_parent(server, tmp_path, questions=QUESTIONS, db_path=db)
        gold_summary, gold_children = fork(server, tmp_path, parents, "first_read", "inject_gold", db_path=db)
        placebo_summary, placebo_children = fork(server, tmp_path, parents, "first_read", "placebo", db_path=db)
    assert gold_summary.run.n_ingested == 6 and placebo_summary.run.n_ingested == 6
    # By hand from the logs: parents 0-3 wrong, 4-5 right; the gold read rescues 0, 1, 3 and breaks 5.
    parent_ok = {t.question.question_id: right(t.final_answer) for t in parents}
    gold_ok = {t.question.question_id: right(t.final_answer) for t in gold_children}
    assert [parent_ok[f"q{i}"] for i in range(6)] == [False] * 4 + [True] * 2
    rescued = sorted(q for q in gold_ok if gold_ok[q] and not parent_ok[q])
    broke = sorted(q for q in gold_ok if parent_ok[q] and not gold_ok[q])
    assert rescued == ["q0", "q1", "q3"] and broke == ["q5"]
    placebo_rescued = [t.question.question_id for t in placebo_children
                       if right(t.final_answer) and not parent_ok[t.question.question_id]]

    with open_readonly(db) as con:
        forks = con.execute("SELECT trajectory_id, parent_trajectory_id, step_index, intervention, placebo "
                            "FROM trajectory_forks WHERE run_id = ? ORDER BY 1", [gold_summary.run_id]).fetchall()
        assert forks == sorted((c.trajectory_id, c.fork.parent_trajectory_id, 1, "inject_gold", False)
                               for c in gold_children)
        assert con.execute("SELECT forked_from FROM runs WHERE run_id = ?",
                           [gold_summary.run_id]).fetchall() == [(parents[0].run.run_id,)]
        row = con.execute("SELECT n_pairs, n_parent_wrong, n_rescued, n_broke, rescue_rate, break_rate "
                          "FROM fork_rescue WHERE run_id = ?", [gold_summary.run_id]).fetchone()
        assert row == (6, 4, 3, 1, 3 / 4, 1 / 2)
        placebo = con.execute("SELECT rescue_rate, placebo_rescue_rate, rescue_over_placebo FROM fork_placebo "
                              "WHERE fork_run_id = ?", [gold_summary.run_id]).fetchone()
        assert placebo == (0.75, len(placebo_rescued) / 4, 0.75 - len(placebo_rescued) / 4)
        pairs = con.execute("SELECT parent_correct, child_correct FROM fork_pairs WHERE run_id = ? ORDER BY "
                            "question_id", [gold_summary.run_id]).fetchall()
    a, b = np.array([p for p, _ in pairs], dtype=float), np.array([c for _, c in pairs], dtype=float)
    result = fork_rescue_stats(a, b)
    table = [[np.sum((a == 1) & (b == 1)), np.sum((a == 1) & (b == 0))],
             [np.sum((a == 0) & (b == 1)), np.sum((a == 0) & (b == 0))]]
    assert result.mcnemar.exact_p == mcnemar(table, exact=True).pvalue
    assert np.isclose(result.mcnemar.chi2_p, mcnemar(table, exact=False, correction=True).pvalue)
    low, high = proportion_confint(3, 4, alpha=0.05, method="wilson")
    assert np.isclose(result.rescue_low, low) and np.isclose(result.rescue_high, high)
    assert result.rescue_rate == 0.75 and result.accuracy_delta.delta == (3 - 1) / 6


def test_batch_where_selects_the_slice_from_the_warehouse(tmp_path):
    db = tmp_path / "w.duckdb"
    with mock_server(agent) as server:
        parents = run_parent(server, tmp_path, questions=QUESTIONS, db_path=db)
        selected, _ = select_parents(db, [parents[0].run.run_id], "correct = false")
        assert sorted(t.question.question_id for t in selected) == ["q0", "q1", "q2", "q3"]
        summary, children = fork(server, tmp_path, selected, "final", "reject_final", db_path=db)
    assert sorted(c.fork.parent_trajectory_id for c in children) == sorted(t.trajectory_id for t in selected)
    with open_readonly(db) as con:
        assert con.execute("SELECT count(*), count(DISTINCT parent_trajectory_id) FROM trajectory_forks "
                           "WHERE run_id = ?", [summary.run_id]).fetchone() == (4, 4)


def test_a_fork_child_rebuilt_from_the_warehouse_keeps_its_fork_record_and_is_not_forked_again(tmp_path):
    db = tmp_path / "w.duckdb"
    with mock_server(agent) as server:
        parents = run_parent(server, tmp_path, questions=QUESTIONS[:2], db_path=db)
        summary, children = fork(server, tmp_path, parents, "first_read", "inject_gold", db_path=db)
        summary.run.log_path.unlink()  # no log to read it back from: the warehouse's tables are all there is
        rebuilt = [load_parent(c.trajectory_id, db=db) for c in children]
        before = len(server.chat_requests)
        (again,) = fork_many(rebuilt, "first_read", "inject_gold", out_dir=tmp_path / "again")
        assert len(server.chat_requests) == before
    assert [t.fork for t in rebuilt] == [c.fork for c in children]
    assert all(t.run.forked_from == parents[0].run.run_id for t in rebuilt)
    assert again.run is None and len(again.skipped) == 2
    assert all("a fork child" in why for _, why in again.skipped)
    with open_readonly(db) as con:  # every field of the fork record has its column: nothing is dropped
        columns = {r[0] for r in con.execute("SELECT column_name FROM information_schema.columns "
                                             "WHERE table_name = 'trajectory_forks'").fetchall()}
    assert set(ForkOrigin.__struct_fields__) <= columns
