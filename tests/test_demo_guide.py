"""`trajscope demo` prints where the dashboard is and three findings, each number matching the logs."""
from __future__ import annotations

import re
from collections import Counter

from click.testing import CliRunner

from trajscope.cli import main
from trajscope.engine.mock_llm import reply_tool_call
from trajscope.format import GateRejectionStep, iter_trajectories


def search_then_final(request):
    """Answers from the snippets without reading: exactly what the Read-Gate rejects."""
    if any(m.get("role") == "tool" for m in request.messages):
        return reply_tool_call("final", {"answer": "Denmore"})
    return reply_tool_call("search", {"query": "bridge"})


def test_demo_prints_the_dashboard_and_three_findings_from_the_warehouse(mock_llm, tmp_path):
    mock_llm.responder = search_then_final
    out = tmp_path / "runs"
    result = CliRunner().invoke(main, [
        "demo", "--model", mock_llm.model_spec, "--n", "3", "--no-app", "--audit-n", "0", "--port", "8642",
        "--db", str(tmp_path / "demo.duckdb"), "--out", str(out),
        "--conditions", "read_gate/baseline,read_gate/full"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    rejections: Counter = Counter()
    trajectories: Counter = Counter()
    for log in out.glob("*.jsonl"):
        for decoded in iter_trajectories(log):
            t = decoded.trajectory
            n = sum(isinstance(s, GateRejectionStep) for s in t.steps)
            rejections[t.run.condition] += n
            trajectories[t.run.condition] += n > 0
    assert rejections["baseline"] == 0 and rejections["full"] > 0
    text = result.output
    assert "on http://127.0.0.1:8642" in text
    gate = re.search(r"  1\. The gate at work: (\S+) \(read_gate/full\) rejected (\d+) final\(s\) in (\d+) "
                     r"trajectories; a replay: http://127\.0\.0\.1:8642/replay\?trajectory=(\S+)", text)
    assert gate, text
    assert (int(gate.group(2)), int(gate.group(3))) == (rejections["full"], trajectories["full"])
    assert gate.group(4).startswith(gate.group(1) + "%3A%3A")
    assert re.search(r"  2\. The failure plane: \S+ -> \S+ \(full\) moves P_disc \d+% -> \d+%", text), text
    assert re.search(r"  3\. McNemar for baseline vs read_gate/full on 3 paired questions \(\d+ fixed, \d+ broken\): "
                     r"http://127\.0\.0\.1:8642/compare\?a=\S+&b=\S+", text), text
