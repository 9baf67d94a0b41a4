"""`trajscope attribute`: each Who&When protocol, driven by a mock that answers from the human labels with a
planted error rate, gives the step-level accuracy that rate implies (recomputed here from the stored rows)."""
from __future__ import annotations

import re

import pytest
from click.testing import CliRunner
from fixtures.forensics.builders import final, trajectory

from trajscope.cli import main
from trajscope.engine.llm import resolve_model
from trajscope.engine.mock_llm import MockLLMServer, reply_json, reply_text
from trajscope.engine.scanners import attribute
from trajscope.format import Run, ToolStep
from trajscope.warehouse import ingest_trajectories, open_readonly

N, STEPS = 20, 6
HUMAN = {i: (i * 7) % STEPS for i in range(N)}  # the people's decisive step of task i (0-based step index)
PLANTED_WRONG = {i for i in range(N) if i % 4 == 0}  # the mock names another step for these: 25 %
SPEAKERS = ["planner", "coder", "terminal", "planner", "verifier", "coder"]  # who took step k (a multi-agent log)


def _target(i: int) -> int:
    return (HUMAN[i] + 3) % STEPS if i in PLANTED_WRONG else HUMAN[i]


def _records() -> list:
    run = Run(run_id="mas", dataset="fx", condition="mas")
    out = []
    for i in range(N):
        steps = [ToolStep(tool_name="act", args={"k": k}, observation=f"task {i} output {k}", source_ref=f"history:{k}",
                          agent=SPEAKERS[k]) for k in range(STEPS - 1)]
        last = final("41")
        last.source_ref, last.agent = f"history:{STEPS - 1}", SPEAKERS[-1]
        out.append(trajectory(run, f"t{i:02d}", f"Task {i}: compute the thing", "42", [*steps, last]))
    return out


def respond(request):
    """Answer as a labeller who is right except on the planted tasks, in whichever protocol asks."""
    text = request.text()
    i = int(re.search(r"Task (\d+):", text).group(1))
    t = _target(i)
    if m := re.search(r"Is step \[history:(\d+)\] the decisive error\?", text):
        return reply_json({"decisive": int(m[1]) == t, "reason": f"step {m[1]} checked"})
    if m := re.search(r"first half \(steps \[history:(\d+)\] to \[history:(\d+)\]\)", text):
        return reply_json({"half": "first" if int(m[1]) <= t <= int(m[2]) else "second", "reason": "halved"})
    return reply_json({"agent": SPEAKERS[t], "step": f"history:{t}", "reason": f"step {t} went wrong"})


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "wh.duckdb"
    ingest_trajectories(path, _records())
    return path


@pytest.mark.parametrize("protocol", ["all-at-once", "step-by-step", "binary-search"])
def test_each_protocol_gives_the_accuracy_the_planted_error_rate_implies(db, protocol):
    with MockLLMServer(respond) as server:
        report = attribute(db, ["mas"], protocol, config=resolve_model(server.model_spec), concurrency=4)
    assert report.n_trajectories == N and report.attributed == N and not report.errors
    with open_readonly(db) as con:
        rows = con.execute("SELECT t.question_id, a.step_index, a.method, a.agent, a.source_ref "
                           "FROM model_step_attributions a JOIN trajectories t USING (trajectory_id) "
                           "ORDER BY 1").fetchall()
        calls = con.execute("SELECT sum(n_calls) FROM scan_verdicts WHERE protocol = ?", [protocol]).fetchone()[0]
    assert {r[2] for r in rows} == {f"llm:{protocol}:mock"}
    predicted = {int(q[1:]): step for q, step, *_ in rows}
    agents = {int(q[1:]): agent for q, _, _, agent, _ in rows}
    assert all(ref == f"history:{step}" for _, step, _, _, ref in rows)
    # Who&When's step-level accuracy: the share of failed trajectories whose decisive step is named exactly.
    accuracy = sum(predicted[i] == HUMAN[i] for i in range(N)) / N
    assert accuracy == pytest.approx(1 - len(PLANTED_WRONG) / N) == 0.75
    # Agent-level accuracy: the share whose responsible agent (the human's step's speaker) is named.
    expected_agent = sum(SPEAKERS[_target(i)] == SPEAKERS[HUMAN[i]] for i in range(N)) / N
    assert sum(agents[i] == SPEAKERS[HUMAN[i]] for i in range(N)) / N == pytest.approx(expected_agent)
    assert 0.75 < expected_agent < 1  # some planted wrong steps were taken by the right agent (planner, coder)
    if protocol == "step-by-step":
        assert calls == sum(_target(i) + 1 for i in range(N))  # it stops at the first step judged decisive
    if protocol == "binary-search":
        assert calls == sum(len(_halvings(_target(i))) for i in range(N))


def _halvings(t: int) -> list[tuple[int, int]]:
    lo, hi, seen = 0, STEPS - 1, []
    while lo < hi:
        mid = (lo + hi) // 2
        seen.append((lo, hi))
        lo, hi = (lo, mid) if t <= mid else (mid + 1, hi)
    return seen


def test_a_step_outside_the_log_or_a_malformed_reply_is_an_error_not_a_crash(db):
    def bad(request):
        i = int(re.search(r"Task (\d+):", request.text()).group(1))
        return reply_json({"step": "99", "reason": "x"}) if i % 2 else reply_text("not json")

    with MockLLMServer(bad) as server:
        report = attribute(db, ["mas"], "all-at-once", config=resolve_model(server.model_spec), limit=4)
    assert report.attributed == 0 and len(report.errors) == 4
    with open_readonly(db) as con:
        rows = con.execute("SELECT verdict, error FROM scan_verdicts ORDER BY trajectory_id").fetchall()
        assert con.execute("SELECT count(*) FROM model_step_attributions").fetchone()[0] == 0
    assert all(v == "error" for v, _ in rows)
    assert any("not in the trajectory" in e for _, e in rows) and any("malformed reply" in e for _, e in rows)


def test_cli_attribute_prints_the_method_and_refuses_an_unknown_protocol(db):
    with MockLLMServer(respond) as server:
        out = CliRunner().invoke(main, ["attribute", "--runs", "mas", "--protocol", "binary-search", "--limit", "3",
                                        "--model", server.model_spec, "--no-cache", "--db", str(db)])
    assert out.exit_code == 0, out.output
    assert "llm:binary-search:mock: 3 trajectories, 3 attributed" in out.output
    bad = CliRunner().invoke(main, ["attribute", "--runs", "mas", "--protocol", "guess", "--db", str(db)])
    assert bad.exit_code != 0 and "guess" in bad.output


def test_hybrid_shows_the_rules_findings_and_is_stored_under_its_own_method(db):
    with MockLLMServer(respond) as server:
        report = attribute(db, ["mas"], "hybrid", config=resolve_model(server.model_spec), limit=2)
        prompt = server.chat_requests[0].text()
        schema = server.chat_requests[0].body["response_format"]["json_schema"]["schema"]
    assert report.attributed == 2
    # The step and agent a constrained model may name are the trajectory's own.
    assert schema["properties"]["step"]["enum"] == [f"history:{k}" for k in range(STEPS)]
    assert schema["properties"]["agent"]["enum"] == ["planner", "coder", "terminal", "verifier"]
    assert "What trajscope's rules found (may be wrong):" in prompt
    with open_readonly(db) as con:
        assert con.execute("SELECT DISTINCT method FROM model_step_attributions").fetchall() == [("llm:hybrid:mock",)]
