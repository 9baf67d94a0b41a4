"""`trajscope demo --conditions`: CONTROLLER/CONDITION[@N], where @N is a prefix of the same questions."""
from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from trajscope.cli import main
from trajscope.cli.demo_cmd import DEFAULT_CONDITIONS, _conditions
from trajscope.engine.mock_llm import reply_tool_call
from trajscope.engine.runs import select_questions
from trajscope.format import iter_trajectories
from trajscope.ingest.datasets import load_dataset


def test_conditions_parse_with_and_without_a_subset():
    assert _conditions("read_gate/baseline, execution_rag/register@6") == [
        ("read_gate", "baseline", None), ("execution_rag", "register", 6)]
    assert ("execution_rag", "register", 6) in _conditions(DEFAULT_CONDITIONS)
    for bad in ("read_gate", "read_gate/full@", "read_gate/full@x", "read_gate/full@0", "/full@2"):
        with pytest.raises(click.BadParameter, match="CONTROLLER/CONDITION"):
            _conditions(bad)


def _answer_at_once(request):
    return reply_tool_call("final", {"answer": "Denmore"})


def test_a_subset_runs_the_first_questions_of_the_others(mock_llm, tmp_path):
    mock_llm.responder = _answer_at_once
    out = tmp_path / "runs"
    result = CliRunner().invoke(main, [
        "demo", "--model", mock_llm.model_spec, "--n", "4", "--no-app", "--audit-n", "0",
        "--db", str(tmp_path / "demo.duckdb"), "--out", str(out),
        "--conditions", "read_gate/baseline,read_gate/full@2"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "read_gate/baseline x 4, read_gate/full x 2" in result.output
    ids = {}
    for log in out.glob("*.jsonl"):
        trajectories = [d.trajectory for d in iter_trajectories(log)]
        ids[trajectories[0].run.condition] = [t.question.question_id for t in trajectories]
    expected = [q.question_id for q in select_questions(load_dataset("demo").questions, 4, 0)]
    assert sorted(ids["baseline"]) == expected
    assert sorted(ids["full"]) == expected[:2]
