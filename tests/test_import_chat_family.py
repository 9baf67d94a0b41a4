"""The chat-with-tool-calls family imported with no flags: gold, one step per assistant message, candidates
from nested search results, the answer by the agents' conventions, embedded human labels, tau-bench trials.

Expected figures are counted here from the raw files, never from the importer's output."""
from __future__ import annotations

import ast
import json
import re
from collections import Counter
from pathlib import Path

import duckdb
from click.testing import CliRunner

from trajscope.cli import main as cli
from trajscope.format import FinalStep, SearchStep, ToolStep
from trajscope.ingest.importers import convert_file, detect_format, import_file
from trajscope.ingest.importers._answer_rules import extract_answer
from trajscope.ingest.importers._gold_shapes import gold_strings
from trajscope.ingest.importers._search_results import ranked_documents

APB = Path("../shared/data/external_logs/agentprocessbench_dev/hotpotqa_dev50.jsonl")
TAU = Path("../shared/data/external_logs/formats/openai_chat_tool_calls/gpt-4o-airline.json")


def _apb_records() -> list[dict]:
    return [json.loads(line) for line in APB.read_text().splitlines() if line.strip()]


def _normal(text: str) -> str:
    """SQuAD normalisation written out here (lower, no punctuation, no articles, single spaces)."""
    text = "".join(ch for ch in text.lower() if ch.isalnum() or ch.isspace())
    return " ".join(w for w in text.split() if w not in ("a", "an", "the"))


def test_agentprocessbench_imports_with_gold_steps_labels_and_answers(tmp_path):
    records = _apb_records()
    db = tmp_path / "w.duckdb"
    result = CliRunner().invoke(cli, ["ingest", str(APB), "--db", str(db)])
    assert result.exit_code == 0, result.output
    assistant = {r["total_index"]: [i for i, m in enumerate(r["messages"]) if m["role"] == "assistant"]
                 for r in records}
    n_labels = sum(len(r["step_labels"]) for r in records)
    n_calls = sum(len(m.get("tool_calls") or []) for r in records for m in r["messages"])
    n_text_only = sum(1 for r in records for m in r["messages"] if m["role"] == "assistant" and not m.get("tool_calls"))
    assert f"{len(records)} trajectories in 1 run(s)" in result.output
    assert f"gold answers: {len(records)} of {len(records)}" in result.output
    assert f"human step labels in the log: {n_labels}" in result.output
    con = duckdb.connect(str(db), read_only=True)
    # Every assistant message is a step at message:N: one per tool call, one per text-only message.
    steps = con.execute("SELECT trajectory_id, step_index, kind, source_ref FROM steps ORDER BY 1, 2").fetchall()
    assert len(steps) == n_calls + n_text_only
    by_traj: dict[str, list[str]] = {}
    for tid, _, _, ref in steps:
        by_traj.setdefault(tid, []).append(ref)
    for r in records:
        refs = by_traj[f"openai_chat:{APB.name}::{r['total_index']}"]
        assert sorted({int(x.split(":")[1]) for x in refs}) == assistant[r["total_index"]]
    # The labels land on the steps of the messages they name.
    rows = con.execute("SELECT h.trajectory_id, h.source_ref, h.label, s.source_ref FROM human_step_labels h "
                       "JOIN steps s USING (trajectory_id, step_index)").fetchall()
    assert len(rows) == n_labels and all(ref == step_ref for _, ref, _, step_ref in rows)
    expected = {(f"openai_chat:{APB.name}::{r['total_index']}", f"message:{k}",
                 {1: "correct", 0: "neutral", -1: "error"}[v]) for r in records for k, v in r["step_labels"].items()}
    assert {(t, ref, label) for t, ref, label, _ in rows} == expected
    golds = dict(con.execute("SELECT question_id, gold_answer FROM questions").fetchall())
    assert golds == {str(r["total_index"]): r["ground_truth"]["target"][0] for r in records}
    assert con.execute("SELECT count(*) FROM candidates").fetchone()[0] == sum(
        len(hits) for r in records for m in r["messages"] if m["role"] == "tool"
        for hits in json.loads(m["content"])["result"])


def test_the_answer_inside_answer_tags_agrees_with_the_people_on_47_of_50(tmp_path):
    records = _apb_records()
    trajectories = {t.question.question_id: t for t in import_file(APB)}
    agree, disagree = 0, []
    for r in records:
        last = [m for m in r["messages"] if m["role"] == "assistant"][-1]["content"]
        tagged = re.findall(r"<answer>(.*?)</answer>", last, re.S)[-1].strip()
        t = trajectories[str(r["total_index"])]
        assert t.final_answer == tagged and t.metadata["answer_rule"] == "answer_tag"
        right = any(_normal(g) in _normal(tagged) for g in r["ground_truth"]["target"])
        assert t.metadata["human_answer_correct"] == (r["final_label"] == 1)
        if right == (r["final_label"] == 1):
            agree += 1
        else:
            disagree.append(r["total_index"])
    assert agree >= 47
    report = convert_file(APB, tmp_path / "apb.jsonl")
    lines = "\n".join(report.lines())
    assert f"{agree} of {len(records)} agree" in lines
    assert all(f"::{i}: answer" in lines for i in disagree)


def test_a_search_that_returns_passages_says_so_in_the_profile():
    t = next(iter(import_file(APB)))
    search = next(s for s in t.steps if isinstance(s, SearchStep))
    record = _apb_records()[0]
    first_result = json.loads(record["messages"][5]["content"])["result"]
    assert [c.chunk_id for c in search.candidates] == [h["document"]["id"] for hits in first_result for h in hits]
    assert [c.rank for c in search.candidates] == [k for hits in first_result for k in range(1, len(hits) + 1)]
    assert search.candidates[0].snippet == first_result[0][0]["document"]["contents"]
    assert t.metadata["search_shows_passages"] is True
    assert isinstance(t.steps[0], ToolStep) and t.steps[0].tool_name is None  # the text-only message 2


def test_tau_bench_ingests_one_question_per_task_across_its_trials(tmp_path):
    runs = json.loads(TAU.read_text())
    db = tmp_path / "w.duckdb"
    result = CliRunner().invoke(cli, ["ingest", str(TAU), "--db", str(db)])
    assert result.exit_code == 0, result.output
    con = duckdb.connect(str(db), read_only=True)
    # The simulated user's opening differs per trial; the task it was given does not.
    tasks = {str(r["task_id"]): r["info"]["task"]["instruction"] for r in runs}
    assert dict(con.execute("SELECT question_id, text FROM questions").fetchall()) == tasks
    assert con.execute("SELECT count(*), count(DISTINCT run_id) FROM trajectories").fetchone() == (len(runs), 4)


def test_tau_bench_trials_rewards_and_tool_calls_match_its_count_script():
    runs = json.loads(TAU.read_text())
    assert detect_format(TAU) == "openai_chat"
    out = list(import_file(TAU))
    calls = Counter(tc["function"]["name"] for r in runs for m in r["traj"] for tc in m.get("tool_calls") or [])
    assert len(out) == len(runs) == 200
    assert Counter(s.tool_name for t in out for s in t.steps if s.tool_name is not None) == calls
    assert sum(calls.values()) == 1164
    assert sum(j.score for t in out for j in t.judgments) == sum(r["reward"] for r in runs) == 84
    assert {t.run.run_id for t in out} == {f"openai_chat:{TAU.name}:trial{r['trial']}" for r in runs}
    # A tool result is the one its call id names within its own trajectory (ids repeat across trajectories).
    # An id may even repeat inside one trajectory: each tool turn answers the oldest open call with its id.
    for t, r in zip(out, runs, strict=True):
        observed: list = []
        open_calls: dict[str, list[int]] = {}
        for m in r["traj"]:
            for tc in m.get("tool_calls") or []:
                open_calls.setdefault(tc["id"], []).append(len(observed))
                observed.append(None)
            if m["role"] == "tool":
                observed[open_calls[m["tool_call_id"]].pop(0)] = m["content"]
        assert [s.observation for s in t.steps if s.tool_name is not None] == observed
    finals = sum(1 for r in runs if (last := [m for m in r["traj"] if m["role"] == "assistant"][-1])
                 and last.get("content") and not last.get("tool_calls"))
    assert sum(1 for t in out if any(isinstance(s, FinalStep) for s in t.steps)) == finals == 149


def test_gold_shapes():
    literal = "{'target': ['Marion, South Australia', 'Marion']}"
    assert gold_strings(literal) == list(ast.literal_eval(literal)["target"])
    assert gold_strings('{"target": ["a", "b"]}') == ["a", "b"]
    assert gold_strings(["x", "y", "x"]) == ["x", "y"]
    assert gold_strings({"answers": ["p"], "aliases": ["q"]}) == ["p", "q"]
    assert gold_strings("(born 1950)") == ["(born 1950)"]
    assert gold_strings("__import__('os').system('true')") == ["__import__('os').system('true')"]
    assert gold_strings(1802) == ["1802"] and gold_strings(None) == [] and gold_strings(True) == []


def test_answer_conventions_each_found_and_linear_on_long_text():
    assert extract_answer("<think>maybe <answer>A</answer></think> <answer> Lima </answer>") == ("Lima", "answer_tag")
    assert extract_answer(r"so \boxed{\frac{1}{2}} done") == (r"\frac{1}{2}", "boxed")
    assert extract_answer("reasoning...\nFinal Answer: Oder\n") == ("Oder", "final_answer_line")
    assert extract_answer("<think>hmm</think>\nParis") == ("Paris", "message")
    long = "<answer>" * 10_000 + "{" * 10_000 + "\\boxed{" * 5_000
    answer, rule = extract_answer(long)
    assert rule == "message" and answer == long.strip()


def test_search_results_in_text_blocks_and_nested_hits():
    text = 'Doc 1(Title: "Marion (film)") Marion is a film.\nDoc 2(Title: Adelaide) Adelaide is a city.'
    ranked = ranked_documents(text, text)
    assert [(r, d.doc_id) for r, d in ranked] == [(1, "title:Marion (film)"), (2, "title:Adelaide")]
    assert ranked[1][1].text == "Doc 2(Title: Adelaide) Adelaide is a city."
    # Long, repetitive text: every scan is linear (a nested quantifier here would hang the import).
    long = "Doc 1(Title: " + "(" * 10_000 + "\n[" + "]" * 10_000 + "\n" + "Doc 2(Title: x)\n" * 2_000
    assert len(ranked_documents(long, long)) == 2_000
    hits = {"results": [{"doc": {"id": 7, "text": "t"}, "score": 0.5}]}
    assert [(r, d.doc_id, d.score) for r, d in ranked_documents(hits, None)] == [(1, "7", 0.5)]


def test_a_malformed_record_is_skipped_with_one_line_and_counted(tmp_path):
    records = [json.loads(x) for x in APB.read_text().splitlines()[:3]]
    at = next(i for i, m in enumerate(records[1]["messages"]) if m.get("tool_calls"))
    records[1]["messages"][at]["tool_calls"][0]["function"]["name"] = None
    log = tmp_path / "three.jsonl"
    log.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    report = convert_file(log, tmp_path / "out.jsonl")
    assert report.trajectories == 2
    assert report.skipped == [f"{log}:2: field messages[{at}].tool_calls[0].function.name: tool call without a "
                              "function name"]
    assert "  malformed records skipped: 1" in report.lines()


def _langgraph_record() -> dict:
    """A LangGraph state dump: LangChain messages by `type`, calls as {name, args, id}, one in `dumpd` form."""
    return {"question": "Which river flows through Velm?", "answer": "Oder", "messages": [
        {"type": "human", "content": "Which river flows through Velm?"},
        {"type": "ai", "content": "", "tool_calls": [{"name": "retrieve", "args": {"query": "Velm river"},
                                                      "id": "c1", "type": "tool_call"}]},
        {"type": "tool", "tool_call_id": "c1", "name": "retrieve",
         "content": json.dumps([{"id": "d7", "title": "Velm", "text": "Velm is a town on the Oder."}])},
        {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "AIMessage"],
         "kwargs": {"content": "I know enough."}},
        {"role": "assistant", "content": [{"type": "text", "text": "Checking."},
                                          {"type": "tool_use", "id": "u1", "name": "search", "input": {"q": "Oder"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "u1", "content": "The Oder is a river."}]},
        {"type": "ai", "content": "<answer>Oder</answer>"}]}


def test_langgraph_and_anthropic_message_shapes_read_as_chat(tmp_path):
    record = _langgraph_record()
    log = tmp_path / "graph.jsonl"
    log.write_text(json.dumps(record) + "\n")
    assert detect_format(log) == "openai_chat"
    (t,) = import_file(log)
    kinds = [(type(s).__name__, s.tool_name, s.source_ref) for s in t.steps]
    assert kinds == [("SearchStep", "retrieve", "message:1"), ("ToolStep", None, "message:3"),
                     ("SearchStep", "search", "message:4"), ("FinalStep", None, "message:6")]
    assert [c.chunk_id for c in t.steps[0].candidates] == ["d7"]
    assert t.steps[2].observation == "The Oder is a river." and t.steps[2].thought == "Checking."
    assert t.final_answer == "Oder" and t.question.gold_answer == "Oder"


def test_messages_inside_a_saved_graph_state_are_found(tmp_path):
    record = _langgraph_record()
    state = {"values": {"messages": record.pop("messages"), "step": 7}, **record}
    log = tmp_path / "state.jsonl"
    log.write_text(json.dumps(state) + "\n")
    (t,) = import_file(log, format="openai_chat")
    assert len(t.steps) == 4 and t.metadata["values"] == {"step": 7}


def test_embedded_labels_keyed_every_way_and_an_unrated_step_left_out(tmp_path):
    record = _langgraph_record()
    record["step_labels"] = {"1": 1, "message:3": -1, "4": None}
    record["final_label"] = -1
    log = tmp_path / "labelled.jsonl"
    log.write_text(json.dumps(record) + "\n")
    (t,) = import_file(log)
    assert [(h.source_ref, h.step_index, h.label) for h in t.human_labels] == [
        ("message:1", 0, "correct"), ("message:3", 1, "error")]
    assert t.metadata["human_answer_correct"] is False and "step_labels" not in t.metadata


def test_smolagents_memory_turns_read_as_calls_of_the_turn_before(tmp_path):
    def call(call_id: str, name: str, arguments: dict) -> list[dict]:
        return [{"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}]

    calls, final = call("call_1", "web_search", {"query": "Velm"}), call("call_2", "final_answer", {"answer": "Oder"})
    text = "## Search Results\n\n[Velm](https://x.example/velm)\nVelm is on the Oder."
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "Which river flows through Velm?"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Thought: search for Velm."}]},
        {"role": "tool-call", "content": [{"type": "text", "text": f"Calling tools:\n{calls!r}"}]},
        {"role": "tool-response", "content": [{"type": "text", "text": f"Call id: call_1\nObservation:\n{text}"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Thought: done."}]},
        {"role": "tool-call", "content": [{"type": "text", "text": f"Calling tools:\n{final!r}"}]},
        {"role": "tool-response", "content": [{"type": "text", "text": "Call id: call_2\nObservation:\nOder"}]}]
    log = tmp_path / "memory.jsonl"
    log.write_text(json.dumps({"task_id": "v1", "true_answer": "Oder", "messages": messages}) + "\n")
    assert detect_format(log) == "openai_chat"
    (t,) = import_file(log)
    assert [(type(s).__name__, s.tool_name, s.source_ref) for s in t.steps] == [
        ("SearchStep", "web_search", "message:1"), ("FinalStep", "final_answer", "message:4")]
    assert t.steps[0].observation == text and t.steps[0].thought == "Thought: search for Velm."
    assert [(c.chunk_id, c.rank, c.snippet) for c in t.steps[0].candidates] == [
        ("https://x.example/velm", 1, "[Velm](https://x.example/velm)\nVelm is on the Oder.")]
    assert t.final_answer == "Oder" and t.metadata["answer_rule"] == "final_answer_tool"
    assert t.question.gold_answer == "Oder"


def test_calls_written_as_text_tags_are_steps_answered_by_the_next_user_turn(tmp_path):
    info = 'Doc 1(Title: "Velm") Velm is a town on the Oder.\nDoc 2(Title: "Oder") The Oder is a river.'
    hermes = '<tool_call>\n{"name": "search", "arguments": {"query": "Oder length"}}\n</tool_call>'
    messages = [
        {"role": "user", "content": "Answer. Search with <search> query </search>; results come in "
                                    "<information> </information>. Question: Which river flows through Velm?"},
        {"role": "assistant", "content": "<think>I need Velm.</think>\n<search> Velm river </search>"},
        {"role": "user", "content": f"<information>{info}</information>"},
        {"role": "assistant", "content": hermes},
        {"role": "user", "content": "<tool_response>The Oder is 840 km long.</tool_response>"},
        {"role": "assistant", "content": "<tool_call> not json </tool_call>"},
        {"role": "user", "content": "No effective tool call detected."},
        {"role": "assistant", "content": "<answer> Oder </answer>"}]
    log = tmp_path / "search_r1.jsonl"
    log.write_text(json.dumps({"id": "s1", "golden_answers": ["Oder", "Odra"], "messages": messages}) + "\n")
    assert detect_format(log) == "openai_chat"
    (t,) = import_file(log)
    assert [(type(s).__name__, s.source_ref) for s in t.steps] == [
        ("SearchStep", "message:1"), ("SearchStep", "message:3"), ("ToolStep", "message:5"), ("FinalStep", "message:7")]
    first, second = t.steps[0], t.steps[1]
    assert first.query == "Velm river" and [c.chunk_id for c in first.candidates] == ["title:Velm", "title:Oder"]
    assert second.query == "Oder length" and second.observation == "The Oder is 840 km long."
    assert t.question.text.startswith("Answer. Search with") and t.question.aliases == ["Odra"]
    assert t.final_answer == "Oder"


def test_gold_nested_as_rl_data_formats_keep_it(tmp_path):
    record = {"reward_model": {"style": "rule", "ground_truth": {"target": ["Oder", "Odra"]}},
              "messages": [{"role": "user", "content": "Which river?"},
                           {"role": "assistant", "content": "<search> Velm river </search>"},
                           {"role": "user", "content": "<information>Doc 1(Title: Velm) on the Oder</information>"},
                           {"role": "assistant", "content": "<answer>Oder</answer>"}]}
    log = tmp_path / "verl.jsonl"
    log.write_text(json.dumps(record) + "\n")
    (t,) = import_file(log)
    assert (t.question.gold_answer, t.question.aliases) == ("Oder", ["Odra"])


def test_the_legacy_function_call_shape_is_detected_and_answered_by_name(tmp_path):
    record = {"id": "f1", "answer": "Oder", "messages": [
        {"role": "user", "content": "Which river flows through Velm?"},
        {"role": "assistant", "content": None, "function_call": {"name": "search", "arguments": '{"query": "Velm"}'}},
        {"role": "function", "name": "search", "content": json.dumps([{"id": "d1", "text": "Velm on the Oder"}])},
        {"role": "assistant", "content": "Reasoning done.\nFinal Answer: Oder"}]}
    log = tmp_path / "legacy.jsonl"
    log.write_text(json.dumps(record) + "\n")
    assert detect_format(log) == "openai_chat"
    (t,) = import_file(log)
    assert [c.chunk_id for c in t.steps[0].candidates] == ["d1"]
    assert (t.final_answer, t.metadata["answer_rule"]) == ("Oder", "final_answer_line")
