"""Forks of imported logs: replayed from the log itself where its tool map allows (searches listing chunk ids,
reads of chunk ids, over a loaded corpus), refused with the reason otherwise (checked on a real export)."""
from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner
from test_controllers_support import CORPUS, RETRIEVER, mock_server
from test_forks import inputs_for

from trajscope.cli import main as cli
from trajscope.engine.controllers import get_controller
from trajscope.engine.forks import ImportedSetup, fork_many, imported_reason, load_parent
from trajscope.engine.mock_llm import reply_tool_call
from trajscope.format import (
    Candidate,
    FinalStep,
    KeywordSearchStep,
    Passage,
    Question,
    ReadStep,
    Run,
    ToolStep,
    Trajectory,
    iter_trajectories,
)
from trajscope.warehouse import open_readonly

PHOENIX = Path(__file__).resolve().parents[2] / "shared" / "data" / "external_logs" / "phoenix_openinference" \
    / "openinference_spans.jsonl"
if not PHOENIX.exists():
    PHOENIX = Path("/work/shared/data/external_logs/phoenix_openinference/openinference_spans.jsonl")


def imported_parent(extra_step=None) -> Trajectory:
    """An external agent's log (its own keyword search, a read, a wrong final) over the fixture's chunk ids."""
    run = Run(run_id="phoenix-like", source="openinference", dataset="fixture", model="gpt-x")
    hits = [Candidate(chunk_id=h.chunk_id, rank=h.rank, snippet=h.snippet) for h in RETRIEVER.search("North Star")]
    steps = [KeywordSearchStep(tool_name="kw", query="North Star publisher", candidates=hits,
                               tokens_in=900, raw="external"),
             ReadStep(tool_name="open", chunk_ids=["c1"], passages=[Passage(chunk_id="c1", text=CORPUS["c1"].text)]),
             *([extra_step] if extra_step else []),
             FinalStep(answer="Anna Murray", raw="external")]
    question = Question(question_id="q1", text="Who married the publisher of The North Star?",
                        gold_answer="Helen Pitts Douglass", gold_chunk_ids=["c2"])
    return Trajectory(trajectory_id="phoenix-like::q1", run=run, question=question, steps=steps,
                      final_answer="Anna Murray", end_reason="final")


def agent(request):
    seen = "\n".join(str(m.get("content") or "") for m in request.messages)
    answer = "Helen Pitts Douglass" if "married Helen Pitts" in seen else "Anna Murray"
    return reply_tool_call("final", {"answer": answer})


def test_an_imported_prefix_is_replayed_from_the_log_onto_trajscope_tools(tmp_path):
    parent = imported_parent()
    with mock_server(agent) as server:
        (summary,) = fork_many([parent], "2", "force_read:c2", out_dir=tmp_path, cache_path=tmp_path / "c.sqlite",
                               model=server.model_spec, inputs=inputs_for(get_controller("read_gate", "baseline")),
                               imported=ImportedSetup(controller="read_gate", condition="baseline", dataset="fixture"))
        requests = server.chat_requests
    (child,) = [d.trajectory for d in iter_trajectories(summary.run.log_path)]
    # Zero calls for the prefix (it came from the log), one for the rest: the final after the forced read.
    assert len(requests) == 1 and child.fork.prefix_log_replays == 2 and child.fork.prefix_model_calls == 0
    # The prefix is the log's own steps (kind, tool name, query), not re-searched with trajscope's retriever.
    assert type(child.steps[0]) is KeywordSearchStep and child.steps[0].tool_name == "kw"
    assert child.steps[0].query == parent.steps[0].query and child.steps[1].tool_name == "open"
    assert [c.chunk_id for c in child.steps[0].candidates] == [c.chunk_id for c in parent.steps[0].candidates]
    assert child.steps[1].passages == parent.steps[1].passages
    messages = requests[0].messages
    # The model sees the log's actions as its own calls of trajscope's tools, and the passages they returned.
    calls = [m["tool_calls"][0]["function"]["name"] for m in messages if m.get("tool_calls")]
    assert calls == ["search", "read", "read"]
    assert CORPUS["c1"].text in messages[-3]["content"] and CORPUS["c2"].text in messages[-1]["content"]
    assert child.final_answer == "Helen Pitts Douglass" and child.run.forked_from == "phoenix-like"
    assert child.run.controller == "read_gate" and child.fork.parent_trajectory_id == parent.trajectory_id


def test_an_imported_step_without_an_equivalent_or_a_missing_corpus_is_refused_with_the_reason(tmp_path):
    parent = imported_parent(ToolStep(tool_name="calculator", args={"x": 1}))
    reason = imported_reason(parent, 3, CORPUS)
    assert "step 2 is a tool (tool 'calculator'), which has no equivalent" in reason
    assert imported_reason(parent, 1, CORPUS) is None
    assert "not in the loaded corpus (c1" in imported_reason(imported_parent(), 2, {"c9": CORPUS["c2"]})
    (summary,) = fork_many([imported_parent()], "2", "reject_final", out_dir=tmp_path)
    assert summary.run is None and "fork it with --controller" in summary.skipped[0][1]


def test_the_real_phoenix_export_is_refused_without_its_corpus(tmp_path):
    db = tmp_path / "w.duckdb"
    runner = CliRunner()
    assert runner.invoke(cli, ["ingest", str(PHOENIX), "--db", str(db)]).exit_code == 0
    with open_readonly(db) as con:
        (tid,) = con.execute("SELECT trajectory_id FROM trajectories ORDER BY 1 LIMIT 1").fetchone()
    parent = load_parent(tid, db=db)  # rebuilt from the warehouse: the source file is a span export
    assert parent.run.source != "engine" and parent.steps
    result = runner.invoke(cli, ["fork", tid, "--at", "final", "-i", "reject_final", "--db", str(db),
                                 "--out", str(tmp_path / "forks")])
    assert result.exit_code == 1 and "fork it with --controller (read_gate or arag), --dataset" in result.output
