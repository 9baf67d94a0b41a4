"""Each importer converts its hand-written fixture to exactly the expected canonical records."""
from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from trajscope.format import (
    Candidate,
    FinalStep,
    ForcedAnswerStep,
    Judgment,
    KeywordSearchStep,
    Passage,
    Question,
    ReadStep,
    RecordError,
    Run,
    SearchStep,
    SemanticSearchStep,
    ToolStep,
    Trajectory,
    step_kind,
    to_builtins,
)
from trajscope.ingest.importers import FORMATS, detect_format, import_file, text_question_id

F = Path("tests/fixtures/importers")


def expected(fmt: str, file: str, question: Question, steps: list, run_id: str | None = None, **fields) -> dict:
    run_fields = fields.pop("run", {})
    rid = run_id or f"{fmt}:{file}"
    return to_builtins(Trajectory(trajectory_id=f"{rid}::{question.question_id}",
                                  run=Run(run_id=rid, source=f"import:{fmt}", **run_fields),
                                  question=question, steps=steps, **fields))


def got(path: Path, **kw) -> list[dict]:
    return [to_builtins(t) for t in import_file(path, **kw)]


def test_react_fireact_chat_list_joined_to_questions_by_index():
    out = got(F / "react_fireact.json", questions=F / "react_questions.json")
    louvre = Question(question_id="1", text="Where is the Louvre?", gold_answer="Paris, France", question_type="bridge")
    water = Question(question_id="0", text="Is water wet?", gold_answer="yes", question_type="comparison")
    assert out == [
        expected("react", "react_fireact.json", louvre, [
            SearchStep(tool_name="search", args={"query": "Louvre"}, query="Louvre",
                       observation="The Louvre is a museum in Paris.", thought="I should search the Louvre.",
                       raw="Thought: I should search the Louvre.\nAction: search[Louvre]", source_ref="message:1"),
            ToolStep(tool_name="click", args={"argument": "Louvre - Wikipedia"},
                      observation="('click', 'Louvre - Wikipedia') generated an exception: Unknown tool name: click",
                      thought="Open the page.",
                      raw="Thought: Open the page.\nAction: click[Louvre - Wikipedia]\nAction: search[Louvre city]",
                      source_ref="message:3"),
            # Lookup finds a sentence inside the page already open: a look-up, not a read.
            ToolStep(tool_name="Lookup", args={"argument": "city"},
                     observation="(Result 1 / 1) It is located in Paris.", thought="Look up the city.",
                     raw="Thought: Look up the city.\nAction: Lookup[city]", source_ref="message:5"),
            FinalStep(tool_name="finish", args={"answer": "Paris"}, answer="Paris",
                      observation="Episode finished, reward = False", thought="It is in Paris.",
                      raw="Thought: It is in Paris.\nAction: finish[Paris]\nThought: done\nAction: search[extra]",
                      source_ref="message:7"),
        ], final_answer="Paris", end_reason="final",
            judgments=[Judgment(judge="em", score=0.0), Judgment(judge="f1", score=0.5)],
            metadata={"reward": False, "gt": "paris france", "pred": "paris"}),
        expected("react", "react_fireact.json", water, [
            # FireAct executes the action after the first "\nAction: ", not the inline one.
            FinalStep(tool_name="finish", args={"answer": "yes"}, answer="yes",
                      observation="Episode finished, reward = True", thought="Obviously. Action: finish[no]",
                      raw="Thought: Obviously. Action: finish[no]\nAction: finish[yes]", source_ref="message:1"),
        ], final_answer="yes", end_reason="final",
            judgments=[Judgment(judge="em", score=1.0), Judgment(judge="f1", score=1.0)],
            metadata={"reward": True, "gt": "yes", "pred": "yes"}),
    ]


def test_react_plain_text_transcript():
    text = "What is the capital of the country where the Eiffel Tower stands?"
    q = Question(question_id=text_question_id(text), text=text)
    assert got(F / "react_transcript.txt", run_id="hotpot-react") == [expected("react", "", q, [
        SearchStep(tool_name="Search", args={"query": "Eiffel Tower"}, query="Eiffel Tower",
                   observation="The Eiffel Tower is a wrought-iron lattice tower in Paris,\nFrance.",
                   thought="I need to find where the Eiffel Tower is.", raw="Action: Search[Eiffel Tower]"),
        FinalStep(tool_name="Finish", args={"answer": "Paris"}, answer="Paris", thought="France's capital is Paris.",
                  raw="Action: Finish[Paris]"),
    ], run_id="hotpot-react", final_answer="Paris", end_reason="final", metadata={"source_line": 1})]


def test_arag_predictions():
    out = got(F / "arag_predictions.jsonl")
    q1 = Question(question_id="q1", text="Who directed Alien?", gold_answer="Ridley Scott")
    q2 = Question(question_id="2", text="Year of Alien?", gold_answer="1979")
    result = [{"chunk_id": "c7", "score": 3.5, "snippet": "Alien is a 1979 film"},
              {"chunk_id": "c9", "score": 1.25, "snippet": "Aliens (1986)"}]
    assert out == [
        expected("arag", "arag_predictions.jsonl", q1, [
            KeywordSearchStep(tool_name="keyword_search", args={"keywords": ["Alien", "director"], "top_k": 2},
                              query="Alien director", cost_usd=0.001,
                              observation=json.dumps(result, separators=(",", ":")),
                              candidates=[Candidate(chunk_id="c7", rank=1, score=3.5, snippet="Alien is a 1979 film"),
                                          Candidate(chunk_id="c9", rank=2, score=1.25, snippet="Aliens (1986)")]),
            ReadStep(tool_name="read_chunk", args={"chunk_ids": ["c7"]}, chunk_ids=["c7"], cost_usd=0.002,
                     observation="Alien is a 1979 film directed by Ridley Scott.",
                     passages=[Passage(chunk_id="c7", text="Alien is a 1979 film directed by Ridley Scott.")]),
            ReadStep(tool_name="read_chunk", args={"chunk_ids": ["c7", "c9"]}, chunk_ids=["c7", "c9"], cost_usd=0.002,
                     observation="(already read) ...",
                     passages=[Passage(chunk_id="c7", is_new=False), Passage(chunk_id="c9", is_new=True)]),
            FinalStep(answer="Ridley Scott"),
        ], final_answer="Ridley Scott", end_reason="final", total_cost_usd=0.005,
            judgments=[Judgment(judge="contain", score=1.0), Judgment(judge="llm", score=1.0)],
            metadata={"chunks_read_ids": ["c7", "c9"], "loops": 3}),
        expected("arag", "arag_predictions.jsonl", q2, [
            SemanticSearchStep(tool_name="semantic_search", args={"query": "Alien release year"},
                               query="Alien release year", observation="1. Alien (film) ... released 1979"),
            ToolStep(tool_name="calculator", args={"expression": "1979+1"}, observation="1980"),
            ForcedAnswerStep(answer="1980"),
        ], final_answer="1980", end_reason="forced_answer", total_cost_usd=0.0,
            judgments=[Judgment(judge="contain", score=0.0)],
            metadata={"chunks_read_ids": [], "loops": 12, "termination_reason": "max_loops_exceeded"}),
    ]


def test_tool_map_override_turns_an_unknown_tool_into_a_search():
    out = got(F / "arag_predictions.jsonl", tool_map={"calculator": "search"})
    step = out[1]["steps"][1]
    assert step["kind"] == "search" and step["query"] == "1979+1"


def test_mapped_jsonl_with_yaml_mapping():
    q = Question(question_id="m-1", text="Capital of Peru?", gold_answer="Lima", aliases=["Lima, Peru"])
    assert got(F / "mapped.jsonl", mapping=F / "mapped.yaml") == [expected("mapped", "mapped.jsonl", q, [
        SearchStep(tool_name="web", args={"q": "Peru capital"}, query="Peru capital",
                   observation="Lima is the capital of Peru.", tokens_in=120, tokens_out=9),
        FinalStep(tool_name="answer", args={"answer": "Lima"}, answer="Lima", tokens_in=140, tokens_out=4),
    ], final_answer="Lima", end_reason="final", judgments=[Judgment(judge="em", score=1.0)],
        run={"model": "tiny-7b"})]


def test_mapping_file_in_json_gives_the_same_records(tmp_path):
    import yaml

    spec = yaml.safe_load((F / "mapped.yaml").read_text())
    (tmp_path / "m.json").write_text(json.dumps(spec))
    assert got(F / "mapped.jsonl", mapping=tmp_path / "m.json") == got(F / "mapped.jsonl", mapping=F / "mapped.yaml")


def test_atif_trajectory():
    q = Question(question_id="vienna-river", text="Which river flows through Vienna?", gold_answer="Danube")
    assert got(F / "atif_trajectory.json") == [expected("atif", "atif_trajectory.json", q, [
        SearchStep(tool_name="search", args={"query": "Vienna river"}, query="Vienna river",
                   observation="[d3] Vienna lies on the Danube.", thought="Need the river of Vienna.",
                   tokens_in=200, tokens_out=20, cost_usd=0.0004, source_ref="message:2"),
        ReadStep(tool_name="read_chunk", args={"chunk_id": "d3"}, chunk_ids=["d3"],
                 passages=[Passage(chunk_id="d3", text="Vienna lies on the Danube river.")],
                 observation="Vienna lies on the Danube river.", tokens_in=260, tokens_out=30, source_ref="message:3"),
        # The read above and this search are the two tool calls of `steps[3]`: both keep its index.
        SearchStep(tool_name="search", args={"query": "Danube length"}, query="Danube length", observation="2850 km",
                   source_ref="message:3"),
        FinalStep(answer="The Danube.", tokens_in=300, tokens_out=5, source_ref="message:4"),
    ], run={"model": "gpt-4o-mini", "config": {"agent": "demo-agent", "agent_version": "0.3.1",
                                                "schema_version": "ATIF-v1.4"}},
        final_answer="The Danube.", end_reason="final", started_at="2025-01-10T10:00:00Z",
        finished_at="2025-01-10T10:00:04Z", total_tokens_in=760, total_tokens_out=55, total_cost_usd=0.0011)]


def _inspect_expected(file: str) -> list[dict]:
    run = {"model": "openai/gpt-4o-mini", "dataset": "hotpotqa", "started_at": "2025-02-01T09:00:00+00:00",
           "config": {"task": "hotpot_agent", "task_id": "T1", "run_id": "R1"}}
    dune = Question(question_id="hp-1", text="Who wrote Dune?", gold_answer="Frank Herbert", aliases=["Herbert"])
    four = Question(question_id="7", text="2+2?", gold_answer="4")
    return [
        expected("inspect", file, dune, [
            SearchStep(tool_name="search", args={"query": "Dune novel author"}, query="Dune novel author",
                       observation="Dune is a 1965 novel by Frank Herbert.", thought="Search for Dune.",
                       source_ref="message:2"),
            FinalStep(tool_name="submit", args={"answer": "Frank Herbert"}, answer="Frank Herbert",
                      observation="Frank Herbert", source_ref="message:4"),
        ], run=run, final_answer="Frank Herbert", end_reason="final",
            judgments=[Judgment(judge="contain", score=1.0, rationale="target found"), Judgment(judge="f1", score=1.0)],
            total_tokens_in=300, total_tokens_out=40, total_latency_ms=2500.0,
            metadata={"scores": {"includes": "C", "f1": 1.0, "custom_scorer": 0.25}, "epoch": 1}),
        # A second epoch is a separate run, so (run, question) stays unique.
        expected("inspect", file, four, [FinalStep(answer="4", source_ref="message:1")],
                 run_id=f"inspect:{file}:epoch2", run=run,
                 final_answer="4", end_reason="final", judgments=[Judgment(judge="em", score=0.0)],
                 metadata={"scores": {"exact": "I"}, "epoch": 2}),
    ]


def test_inspect_json_log():
    assert got(F / "inspect_log.json") == _inspect_expected("inspect_log.json")


def test_inspect_eval_archive(tmp_path):
    log = json.loads((F / "inspect_log.json").read_text())
    samples = log.pop("samples")
    archive = tmp_path / "run.eval"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("_journal/start.json", json.dumps({"version": 2, "eval": log["eval"], "plan": log["plan"]}))
        zf.writestr("header.json", json.dumps(log))
        for s in samples:
            zf.writestr(f"samples/{s['id']}_epoch_{s['epoch']}.json", json.dumps(s))
    assert detect_format(archive) == "inspect"
    assert sorted(got(archive), key=lambda t: t["trajectory_id"]) == sorted(
        _inspect_expected("run.eval"), key=lambda t: t["trajectory_id"])


def test_openinference_spans():
    eiffel = Question(question_id="eiffel", text="When was the Eiffel Tower built?", gold_answer="1887-1889")
    rome = Question(question_id="t-2", text="Who founded Rome?")
    file = "openinference_spans.jsonl"
    assert got(F / file) == [
        expected("openinference", file, eiffel, [
            SearchStep(tool_name="search", args={"query": "Eiffel Tower construction"},
                       query="Eiffel Tower construction",
                       observation="2 documents", thought="I will search.", tokens_in=50, tokens_out=12,
                       latency_ms=250.0,
                       candidates=[Candidate(chunk_id="p12", rank=1, score=0.91, snippet="Built 1887-1889."),
                                   Candidate(chunk_id="p40", rank=2, score=0.55, snippet="Gustave Eiffel's company.")],
                       source_ref="span:s-tool1"),
            FinalStep(answer="1889", tokens_in=90, tokens_out=3, source_ref="span:s-llm2"),
        ], run={"model": "gpt-4o-mini"}, final_answer="1889", end_reason="final",
            started_at="2025-03-01T12:00:00Z", finished_at="2025-03-01T12:00:05Z", metadata={"trace_id": "t-1"}),
        # A document without an id is no candidate: chunk ids are never invented.
        expected("openinference", file, rome, [
            SearchStep(tool_name="vector-lookup", args={"query": "founder of Rome"}, query="founder of Rome",
                       latency_ms=250.0, source_ref="span:u-ret"),
        ], end_reason="error", error="index offline", started_at="2025-03-01T13:00:00Z",
            finished_at="2025-03-01T13:00:01Z", metadata={"trace_id": "t-2"}),
    ]


def test_otel_genai_otlp_with_tool_map_override():
    trace = "5b8efff798038103d269b633813fc60c"
    q = Question(question_id=trace, text="Who painted the Mona Lisa?")
    out = got(F / "otel_genai_otlp.json", tool_map={"retrieve_docs": "semantic_search"})
    assert out == [expected("otel_genai", "otel_genai_otlp.json", q, [
        SemanticSearchStep(tool_name="retrieve_docs", args={"q": "Mona Lisa painter"}, query="Mona Lisa painter",
                           observation="Leonardo da Vinci painted it.", thought="Let me look it up.",
                           tokens_in=150, tokens_out=20, latency_ms=300.0,
                           candidates=[Candidate(chunk_id="doc_9", rank=1, score=0.93),
                                       Candidate(chunk_id="doc_4", rank=2, score=0.41)],
                           source_ref="span:0000000000000003"),
        FinalStep(answer="Leonardo da Vinci", tokens_in=210, tokens_out=8, source_ref="span:0000000000000005"),
    ], run={"model": "gpt-4o"}, final_answer="Leonardo da Vinci", end_reason="final",
        started_at="2023-11-14T22:13:20Z", finished_at="2023-11-14T22:13:22.100000Z", metadata={"trace_id": trace})]


def test_tool_map_file(tmp_path):
    from trajscope.ingest.importers import load_tool_map

    (tmp_path / "tools.yaml").write_text("calculator: search\n")
    assert load_tool_map(tmp_path / "tools.yaml") == {"calculator": "search"}
    (tmp_path / "bad.yaml").write_text("calculator: compute\n")
    with pytest.raises(RecordError) as info:
        load_tool_map(tmp_path / "bad.yaml")
    assert info.value.field == "calculator"


@pytest.mark.parametrize("file, fmt", [
    ("react_fireact.json", "react"), ("react_transcript.txt", "react"), ("arag_predictions.jsonl", "arag"),
    ("atif_trajectory.json", "atif"), ("inspect_log.json", "inspect"), ("openinference_spans.jsonl", "openinference"),
    ("otel_genai_otlp.json", "otel_genai"), ("mapped.jsonl", None),
])
def test_detect_format(file, fmt):
    assert detect_format(F / file) == fmt
    assert fmt is None or fmt in FORMATS


def test_imported_records_round_trip_through_the_canonical_codec():
    from trajscope.format import decode_trajectory, encode

    for t in import_file(F / "atif_trajectory.json"):
        assert to_builtins(decode_trajectory(encode(t))) == to_builtins(t)


def test_a_jsonl_of_react_chat_lists_is_detected_and_imported(tmp_path):
    # The FireAct chat shape, one record per line under "messages" (as many fine-tuned ReAct agents log).
    records = [
        {"id": "q1", "answer": "Paris", "messages": [
            {"role": "user", "content": "Question: Where is the Louvre?"},
            {"role": "assistant", "content": "Thought: search it.\nAction 1: Search[Louvre]"},
            {"role": "user", "content": "Observation 1: The Louvre is a museum in Paris."},
            {"role": "assistant", "content": "Thought: done.\nAction 2: Finish[Paris]"}]},
        {"id": "q2", "answer": "Oder", "messages": [
            {"role": "user", "content": "Question: Which river flows through Frankfurt (Oder)?"},
            {"role": "assistant", "content": "Action 1: Finish[Oder]"}]},
    ]
    log = tmp_path / "chats.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in records))
    assert detect_format(log) == "react"
    got = list(import_file(log))
    assert [(t.question.question_id, t.question.gold_answer, t.final_answer) for t in got] == [
        ("q1", "Paris", "Paris"), ("q2", "Oder", "Oder")]
    assert [step_kind(s) for s in got[0].steps] == ["search", "final"]
    plain_chat = tmp_path / "finetune.jsonl"  # chat lists without ReAct actions are no trajectory log
    plain_chat.write_text(json.dumps({"messages": [{"role": "user", "content": "hi"},
                                                   {"role": "assistant", "content": "hello"}]}) + "\n")
    assert detect_format(plain_chat) is None
