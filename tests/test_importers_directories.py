"""On fixtures written for the test: a directory of per-trajectory JSON files is one
run (split by a field on request), and a TRAIL-style `{trace_id, spans}` export with nested child_spans
becomes one trajectory with a step per LLM and tool span."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from trajscope.cli import main
from trajscope.format import ErrorStep, FinalStep, HumanLabel, Question, Run, ToolStep, Trajectory, to_builtins
from trajscope.ingest.importers import ImportOptions, convert_file, import_file
from trajscope.warehouse import open_readonly

F = Path("tests/fixtures/importers")
WHO = F / "who_when_dir"
TRAIL = F / "trail_dir"


def _who(qid: str, text: str, gold: str, level: int, agents: list[str], history: list[tuple[str, str, str]],
         mistake: tuple[int, str, str]) -> dict:
    run_id = "who_and_when:who_when_dir"
    steps = [ToolStep(tool_name=None, args={"role": role}, raw=content, source_ref=f"history:{i}", agent=name,
                      # the code runner's turns are the environment's output
                      observation=content if name == "Computer_terminal" else None)
             for i, (role, name, content) in enumerate(history)]
    step, agent, reason = mistake
    return to_builtins(Trajectory(
        trajectory_id=f"{run_id}::{qid}", run=Run(run_id=run_id, source="import:who_and_when"),
        question=Question(question_id=qid, text=text, gold_answer=gold), steps=steps,
        metadata={"source_file": f"{qid}.json", "level": level, "is_correct": False, "agents": agents},
        human_labels=[HumanLabel(label="error", source_ref=f"history:{step}", step_index=step, agent=agent,
                                 reason=reason, source="who_and_when")]))


EXPECTED_WHO = [
    _who("w1", "How many moons has Velm?", "2", 1, ["Checker", "Expert"],
         [("user", "human", "Find the moons of Velm."), ("assistant", "Expert", "Velm has 3 moons."),
          ("user", "Computer_terminal", "exitcode: 0\n3")], (1, "Expert", "Counted a ring as a moon.")),
    _who("w2", "Who mapped the Oder?", "Ada Brenn", 2, ["Geographer"],
         [("user", "human", "Who mapped the Oder?"), ("assistant", "Geographer", "Tobias Lorring mapped it.")],
         (1, "Geographer", "Named the wrong person.")),
]


def test_a_directory_of_per_trajectory_files_is_one_run_of_exactly_the_expected_records():
    assert [to_builtins(t) for t in import_file(WHO)] == EXPECTED_WHO


def test_split_by_a_field_makes_one_run_per_value(tmp_path):
    report = convert_file(WHO, tmp_path / "out.jsonl", ImportOptions(split_by="metadata.level"))
    assert sorted(r.run_id for r in report.runs) == ["who_and_when:who_when_dir:level=1",
                                                     "who_and_when:who_when_dir:level=2"]
    db = tmp_path / "wh.duckdb"
    result = CliRunner().invoke(main, ["ingest", str(WHO), "--split-by", "metadata.level", "--db", str(db)])
    assert result.exit_code == 0, result.output
    with open_readonly(db) as con:
        rows = con.execute("SELECT run_id, count(*) FROM trajectories GROUP BY 1 ORDER BY 1").fetchall()
        labels = con.execute("SELECT count(*) FROM human_step_labels").fetchone()[0]
    assert rows == [("who_and_when:who_when_dir:level=1", 1), ("who_and_when:who_when_dir:level=2", 1)]
    assert labels == 2


def test_trail_spans_with_nested_child_spans_convert_to_exactly_the_expected_record():
    run_id = "trail:trail_dir"
    thought1 = "Thought: print it.\nCode:\n```py\nprint(x)\n```"
    thought2 = "Thought: done.\nCode:\n```py\nfinal_answer('patched')\n```"
    expected = Trajectory(
        trajectory_id=f"{run_id}::tr1", run=Run(run_id=run_id, source="import:trail", model="gpt-4o"),
        question=Question(question_id="tr1", text="Fix the Velm bug."),  # the AGENT span's task
        steps=[
            # the LLM span's code, run by the CHAIN step that failed: an error step with the chain's log
            ErrorStep(error_type="tool_error", message="NameError: name 'x' is not defined",
                      tool_name="python_interpreter", args={"code": "print(x)\n"},
                      observation="Execution logs: boom", thought=thought1, raw=thought1, source_ref="span:l1",
                      tokens_in=100, tokens_out=20, latency_ms=2500.0),
            ToolStep(tool_name="python_interpreter", args={"code": "final_answer('patched')\n"},
                     observation="Last output: patched", thought=thought2, raw=thought2, source_ref="span:l2",
                     tokens_in=100, tokens_out=20),
            FinalStep(tool_name="final_answer", args={"args": ["patched"]}, answer="patched", observation="patched",
                      source_ref="span:t2", latency_ms=100.0),
        ],
        final_answer="patched", end_reason="final", started_at="2025-01-01T00:00:00Z",
        metadata={"trace_id": "tr1", "span_count": 6})
    assert [to_builtins(t) for t in import_file(TRAIL)] == [to_builtins(expected)]
