"""`--at first_decisive_error --intervention auto`: each wrong trajectory gets the intervention its first
decisive error implies (and auto_placebo its control); fork_rule_rescue reports rescue against placebo per rule."""
from __future__ import annotations

from click.testing import CliRunner
from test_controllers_support import CORPUS, mock_server
from test_forks import run_parent

import trajscope.engine.forks._run as fork_run
from trajscope.cli import main as cli
from trajscope.engine.forks import placebo_chunk
from trajscope.engine.mock_llm import reply_tool_call
from trajscope.format import Question, SearchStep, iter_trajectories
from trajscope.warehouse import open_readonly

GOLD = ["c1", "c2"]
QUESTIONS = [Question(question_id=f"q{i}", text=f"Who married the publisher of The North Star? (case {i})",
                      gold_answer="Helen Pitts Douglass", gold_chunk_ids=GOLD) for i in range(4)]
PLANS = {  # case -> the agent's actions before its final
    0: [("search", {"query": "North Star Douglass"})],
    1: [("search", {"query": "Liberator Garrison"})],
    2: [("search", {"query": "North Star"}), ("read", {"chunk_id": "c1"})],
    3: [("search", {"query": "North Star Douglass married"}), ("read", {"chunk_id": ["c1", "c2"]})],
}


def agent(request):
    """Follows its case's plan, then answers: right once Helen Pitts's marriage was read (case 0: once the
    North Star passage was), except case 3 (it read everything and still answers wrong)."""
    seen = "\n".join(str(m.get("content") or "") for m in request.messages)
    case = int(seen.split("(case ")[1][0])
    tools = sum(1 for m in request.messages if m["role"] == "tool")
    if tools < len(PLANS[case]):
        return reply_tool_call(*PLANS[case][tools])
    read = {c for c in ("c1", "c2") if f"[{c}] {CORPUS[c].title}\n" in seen}
    right = ("c2" in read or (case == 0 and "c1" in read)) and case != 3
    return reply_tool_call("final", {"answer": "Helen Pitts Douglass" if right else "Anna Murray"})


def implied(rule, parent, step, chunk, placebo):
    """The mapping of the automatic forks, by hand: (fork step, intervention, argument) or None."""
    other = placebo_chunk(chunk, set(GOLD), CORPUS) if chunk else None
    target = other if placebo else chunk
    if rule == "never_queried":
        last = max(i for i, s in enumerate(parent.steps[:step + 1]) if isinstance(s, SearchStep))
        return last, "replace_query", CORPUS[target].title
    if rule in ("never_retrieved", "ranked_out"):
        return step, "inject_candidate", target
    if rule == "not_read":
        return step + 1, "placebo" if placebo else "force_read", target
    return None


def test_auto_applies_the_intervention_each_decisive_error_implies_and_reports_it_against_placebo(
        tmp_path, monkeypatch):
    db = tmp_path / "w.duckdb"
    with mock_server(agent) as server:
        parents = {t.trajectory_id: t for t in run_parent(server, tmp_path, questions=QUESTIONS, db_path=db)}
        run_id = next(iter(parents.values())).run.run_id
        with open_readonly(db) as con:
            decisive = {r[0]: r[1:] for r in con.execute(
                "SELECT trajectory_id, rule, step_index, chunk_id FROM first_decisive_error").fetchall()}
        assert len(decisive) == 4  # every parent is wrong
        from test_forks import inputs_for

        monkeypatch.setattr(fork_run, "inputs_for", lambda run: inputs_for(None))  # the fixture's corpus
        logs = {}
        for name in ("auto", "auto_placebo"):
            result = CliRunner().invoke(cli, ["fork", "--runs", run_id, "--at", "first_decisive_error", "-i", name,
                                              "--cache-path", str(tmp_path / "cache.sqlite"), "--out",
                                              str(tmp_path / "forks"), "--db", str(db)])
            assert result.exit_code == 0, result.output
            logs[name] = [d.trajectory for d in iter_trajectories(next(
                (tmp_path / "forks").glob(f"*fork-{name}-at-first_decisive_error-*.jsonl")))]
    expected_children = 0
    for name, children in logs.items():
        by_parent = {c.fork.parent_trajectory_id: c for c in children}
        for tid, (rule, step, chunk) in decisive.items():
            want = implied(rule, parents[tid], step, chunk, name == "auto_placebo")
            if want is None:
                assert tid not in by_parent  # read, then wrong: none applies, and the skip says so
                continue
            child = by_parent[tid]
            expected_children += 1
            assert (child.fork.step_index, child.fork.intervention, child.fork.argument) == want
            assert child.fork.rule == f"first_decisive_error:{rule}" and child.fork.placebo == (name == "auto_placebo")
    assert expected_children >= 4 and {r for r, _, _ in decisive.values()} >= {"reasoning"}

    right = {c.trajectory_id: "helen pitts" in (c.final_answer or "").lower() for cs in logs.values() for c in cs}
    with open_readonly(db) as con:
        rows = con.execute("SELECT decisive_rule, n_parent_wrong, n_rescued, placebo_n_parent_wrong, "
                           "placebo_n_rescued FROM fork_rule_rescue ORDER BY 1").fetchall()
    by_rule: dict[str, list[int]] = {}
    for name, children in logs.items():
        for c in children:
            cell = by_rule.setdefault(c.fork.rule.split(":")[1], [0, 0, 0, 0])
            offset = 2 if name == "auto_placebo" else 0
            cell[offset] += 1
            cell[offset + 1] += int(right[c.trajectory_id])
    assert rows == sorted((rule, *cells) for rule, cells in by_rule.items())
    # The North Star passage forced into the never-reading agent's context rescues it; its placebo does not.
    assert ("not_read", 1, 1, 1, 0) in rows
