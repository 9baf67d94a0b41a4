"""Log families a new user brings: each hand-written fixture converts to exactly the expected records,
in one command with its import report."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from trajscope.cli import main as cli
from trajscope.format import (
    Candidate,
    ErrorStep,
    FinalStep,
    Judgment,
    Passage,
    Question,
    ReadStep,
    Run,
    SearchStep,
    ToolStep,
    Trajectory,
    to_builtins,
)
from trajscope.ingest.importers import FORMATS, convert_file, detect_format, import_file, text_question_id
from trajscope.warehouse import open_readonly

F = Path("tests/fixtures/importers")
CHAT = F / "openai_chat.jsonl"


def _traj(run_id: str, fmt: str, question: Question, steps: list, **fields) -> dict:
    return to_builtins(Trajectory(trajectory_id=f"{run_id}::{question.question_id}",
                                  run=Run(run_id=run_id, source=f"import:{fmt}"), question=question, steps=steps,
                                  **fields))


def _lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


# --- item 0: OpenAI chat-completions `messages` with tool_calls / tool turns -------------------------------

def _chat_expected() -> list[dict]:
    raw = _lines(CHAT)
    run = "openai_chat:openai_chat.jsonl"
    c1 = Question(question_id="c1", text="Which river flows through Velm?", gold_answer="Oder")
    c2 = Question(question_id="c2", text="Who founded the Velm Review?", gold_answer="Ada Brenn", aliases=["A. Brenn"])
    c3 = Question(question_id="c3", text="How long is the Oder?", gold_answer="840 km")
    msgs1, msgs2, msgs3 = raw[0]["messages"], raw[1]["messages"], raw[2]["messages"]
    first = _traj(run, "openai_chat", c1, [
        SearchStep(tool_name="search_documents", args={"query": "Velm river"}, query="Velm river",
                   observation=msgs1[3]["content"], thought="I will search for Velm.",
                   candidates=[Candidate(chunk_id="d7", rank=1, score=12.5, snippet="Velm is a town on the Oder."),
                               Candidate(chunk_id="d9", rank=2, score=8.0, snippet="Ada Brenn was born in Velm.")],
                   source_ref="message:2"),
        # The passage is the document's text, not the tool's JSON.
        ReadStep(tool_name="read_document", args={"doc_id": "d7"}, chunk_ids=["d7"], observation=msgs1[5]["content"],
                 passages=[Passage(chunk_id="d7", text="Velm is a town on the Oder river.")], source_ref="message:4"),
        FinalStep(answer="Oder", thought="Oder", raw="Oder", source_ref="message:6"),
    ], final_answer="Oder", end_reason="final",
        judgments=[Judgment(judge="em", score=1.0, rationale="source field `correct`")],
        metadata={"reward": 1.0, "label": "good", "answer_rule": "message", "search_shows_passages": True})

    def second(run_id: str, closing: str, judge: float) -> dict:
        return _traj(run_id, "openai_chat", c2, [
            SearchStep(tool_name="retrieve", args={"query": "Velm Review founder"}, query="Velm Review founder",
                       observation=msgs2[3]["content"],
                       candidates=[Candidate(chunk_id="3", rank=1, snippet="Velm Review, a journal")],
                       source_ref="message:1"),
            # `fetchPage` is a read by the name rules; plain text for the URL it names is that passage.
            ReadStep(tool_name="fetchPage", args={"url": "https://wiki.example/Velm_Review"},
                     chunk_ids=["https://wiki.example/Velm_Review"], observation=msgs2[2]["content"],
                     passages=[Passage(chunk_id="https://wiki.example/Velm_Review", text=msgs2[2]["content"])],
                     source_ref="message:1"),
            FinalStep(tool_name="submit_answer", args={"answer": "Ada Brenn"}, answer="Ada Brenn",
                      observation="submitted", thought="Submitting.", source_ref="message:4"),
            # Every assistant message is a step: the text after the final tool is one of its own.
            ToolStep(tool_name=None, thought=closing, raw=closing, source_ref="message:6"),
        ], final_answer="Ada Brenn", end_reason="final",
            metadata={"scores": {"judge": judge}, "answer_rule": "final_answer_tool", "search_shows_passages": True})

    third = _traj(run, "openai_chat", c3, [
        ErrorStep(error_type="tool_error", message="unknown doc_id d99", tool_name="read_document",
                  args={"doc_id": "d99"}, observation=msgs3[2]["content"], thought="Read it.", source_ref="message:1"),
        ToolStep(tool_name="calculator", args={"expression": "2*420"}, observation="840", source_ref="message:3"),
    ])
    return [first, second(run, "The answer is Ada Brenn.", 0.9), third, first,
            second(f"{run}:attempt2", "Ada Brenn.", 0.8)]


def test_openai_chat_messages_are_detected_and_convert_to_exactly_the_expected_records():
    assert detect_format(CHAT) == "openai_chat" and "openai_chat" in FORMATS
    assert [to_builtins(t) for t in import_file(CHAT)] == _chat_expected()


def test_openai_chat_tool_map_overrides_the_name_rules(tmp_path):
    out = list(import_file(CHAT, tool_map={"fetchPage": "tool", "calculator": "search"}))
    kinds = {s.tool_name: s.__struct_config__.tag for t in out for s in t.steps}
    assert kinds["fetchPage"] == "tool" and kinds["calculator"] == "search"
    assert kinds["search_documents"] == "search" and kinds["read_document"] == "read"


@pytest.mark.parametrize("name, action", [
    ("search_documents", "search"), ("kb_query", "search"), ("retrieveChunks", "search"),
    ("read_document", "read"), ("fetchPage", "read"), ("open_url", "read"), ("get_passage", "read"),
    ("submit_final_answer", "final"), ("answer_question", "final"), ("calculator", None), ("python", None),
])
def test_chat_default_name_rules(name, action):
    from trajscope.ingest.importers._chat import name_rule

    assert name_rule(name) == action


def test_openai_chat_in_one_command_prints_its_import_report(tmp_path):
    db = tmp_path / "w.duckdb"
    result = CliRunner().invoke(cli, ["ingest", str(CHAT), "--db", str(db)])
    assert result.exit_code == 0, result.output
    assert "(openai_chat): 4 trajectories in 2 run(s)" in result.output
    assert "steps: final 3, read 3, search 3, tool 3, error 1" in result.output
    assert "duplicates dropped: 1" in result.output
    assert "unmapped tools: calculator 1" in result.output


# --- item 5: entity coverage on passage text, never its JSON encoding ---------------------------------

def test_entity_coverage_is_the_same_for_compact_json_spaced_json_and_plain_text():
    from trajscope.engine.entities import EXTRACTORS, entity_coverage, passage_haystack

    question = "In which year was the lighthouse of Brenn built by Ida Kessler?"
    doc = {"chunk_id": "c07", "title": "Brenn", "text": "Brenn is a fishing town; Ida Kessler built its lighthouse."}
    compact = json.dumps(doc, separators=(",", ":"))
    spaced = json.dumps(doc, indent=2)
    plain = "Brenn\nBrenn is a fishing town; Ida Kessler built its lighthouse."
    entities = EXTRACTORS["regex"]([question])[0]
    assert {"Brenn", "Ida Kessler"} <= set(entities)
    covs = [entity_coverage(entities, passage_haystack([t])) for t in (compact, spaced, plain)]
    assert [c.coverage for c in covs] == [1.0, 1.0, 1.0]
    # The id is no passage text: "c07" is not a word the passage says.
    assert " c07 " not in passage_haystack([compact])


# --- item 7: reads that returned content are never counted failed ------------------------------------

def test_atif_read_of_a_file_path_that_returned_content_is_a_read(tmp_path):
    doc = {"schema_version": "ATIF-v1.4", "session_id": "s-read", "steps": [
        {"step_id": 1, "source": "user", "message": "What does setup.py install?"},
        {"step_id": 2, "source": "agent", "message": "",
         "tool_calls": [{"tool_call_id": "r1", "function_name": "Read", "arguments": {"file_path": "/repo/setup.py"}}],
         "observation": {"results": [{"source_call_id": "r1", "content": "from setuptools import setup"}]}},
        {"step_id": 3, "source": "agent", "message": "setuptools"}]}
    (tmp_path / "s.json").write_text(json.dumps(doc))
    [t] = import_file(tmp_path / "s.json")
    read = t.steps[0]
    assert isinstance(read, ReadStep) and read.passages == [
        Passage(chunk_id="/repo/setup.py", text="from setuptools import setup")]


def _otel_without_content(tmp_path: Path) -> Path:
    """The fixture OTLP file as OTel GenAI writes it with content capture off (no arguments, results, messages)."""
    def span(sid, parent, name, attrs, status=None):
        return {"traceId": "ab" * 16, "spanId": sid, "parentSpanId": parent, "name": name,
                "startTimeUnixNano": str(1_700_000_000_000_000_000 + int(sid[-2:], 16) * 1000),
                "endTimeUnixNano": str(1_700_000_000_000_000_000 + int(sid[-2:], 16) * 1000 + 500),
                "attributes": [{"key": k, "value": {"stringValue": v}} for k, v in attrs.items()],
                "status": status or {}}
    spans = [
        span("00000000000000a1", "", "invoke_agent rag", {"gen_ai.operation.name": "invoke_agent",
                                                          "rag.question_id": "n1", "rag.gold_answer": "Oder",
                                                          "rag.question": "Which river flows through Velm?"}),
        span("00000000000000a2", "00000000000000a1", "chat gpt", {"gen_ai.operation.name": "chat"}),
        span("00000000000000a3", "00000000000000a1", "execute_tool read",
             {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "read", "gen_ai.tool.call.id": "call_1"}),
        span("00000000000000a4", "00000000000000a1", "execute_tool read",
             {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "read", "gen_ai.tool.call.id": "call_2"},
             {"code": 2, "message": "unknown chunk"}),
        span("00000000000000a5", "00000000000000a1", "chat gpt", {"gen_ai.operation.name": "chat"}),
    ]
    path = tmp_path / "otel_nocontent.jsonl"
    path.write_text(json.dumps({"resourceSpans": [{"resource": {}, "scopeSpans": [{"spans": spans}]}]}) + "\n")
    return path


def test_otel_reads_without_captured_content_are_reads_and_a_failed_span_is_not(tmp_path):
    path = _otel_without_content(tmp_path)
    [t] = import_file(path)
    assert [s.__struct_config__.tag for s in t.steps] == ["read", "error"]
    assert t.steps[0].passages == [Passage(chunk_id="unrecorded:call_1")]
    assert t.final_answer is None  # the answer text was not captured


def test_a_trace_without_any_captured_text_imports_in_one_command_and_says_what_is_missing(tmp_path):
    path = _otel_without_content(tmp_path)
    rec = json.loads(path.read_text())
    for span in rec["resourceSpans"][0]["scopeSpans"][0]["spans"]:
        span["attributes"] = [a for a in span["attributes"] if a["key"] != "rag.question"]
    path.write_text(json.dumps(rec) + "\n")
    result = CliRunner().invoke(cli, ["ingest", str(path), "--db", str(tmp_path / "w.duckdb")])
    assert result.exit_code == 0, result.output
    assert "warning: some traces carry no question text (content capture off)" in result.output
    [t] = import_file(path)
    assert (t.question.question_id, t.question.text, t.question.gold_answer) == (
        "n1", "(question text not captured: n1)", "Oder")


def test_no_answer_text_is_not_judged_and_says_so(tmp_path):
    """Item 6: without the answer text, judge gives no EM / F1 / Contain 0; correctness says why."""
    from trajscope.engine.judge_pass import judge_run
    from trajscope.warehouse import open_readonly

    db = tmp_path / "w.duckdb"
    result = CliRunner().invoke(cli, ["ingest", str(_otel_without_content(tmp_path)), "--db", str(db)])
    assert result.exit_code == 0, result.output
    assert "steps: error 1, read 1" in result.output
    report = judge_run(db, "otel_genai:otel_nocontent.jsonl")
    assert report.no_answer_skipped == 1 and report.lexical_added == 0
    assert "1 no answer text: not judged" in report.summary()
    with open_readonly(db) as con:
        assert con.execute("SELECT count(*) FROM judgments").fetchone()[0] == 0
        assert con.execute("SELECT read_count, failed_read_count FROM trajectories").fetchone() == (1, 0)
        reason = con.execute("SELECT correct, correct_reason FROM trajectory_correctness").fetchone()
    assert reason[0] is None and reason[1].startswith("no answer text: not judged")


def test_a_budget_trajectory_without_an_answer_is_still_scored_zero(tmp_path):
    from trajscope.engine.judge_pass import JudgeInput, answer_missing

    item = JudgeInput("t", "h", "q?", "Oder", [], None, [], [], [], [], end_reason="budget")
    assert not answer_missing(item)
    assert answer_missing(JudgeInput("t", "h", "q?", "Oder", [], None, [], [], [], [], end_reason=None))


def test_convert_report_for_chat_names_the_format(tmp_path):
    report = convert_file(CHAT, tmp_path / "out.jsonl")
    assert report.format == "openai_chat" and report.trajectories == 4 and len(report.duplicates) == 1


# --- item 1: few-shot prompts (instruction, examples up to `(END OF EXAMPLES)`, then the episode) ------

def test_fewshot_autoact_prompts_give_the_one_episode_after_the_examples():
    run = "autoact:fewshot_autoact.jsonl"
    q1 = Question(question_id=text_question_id("Which river flows through Velm?"),
                  text="Which river flows through Velm?", gold_answer="Oder")
    q2 = Question(question_id=text_question_id("Who founded the Velm Review?"),
                  text="Who founded the Velm Review?", gold_answer="Ada Brenn")
    meta = {"reward": 1, "halted": False, "error": False, "verdict": "Answer is CORRECT"}
    em = [Judgment(judge="em", score=1.0, rationale="source field `correct`")]
    assert [to_builtins(t) for t in import_file(F / "fewshot_autoact.jsonl")] == [
        _traj(run, "autoact", q1, [
            SearchStep(tool_name="Search", args={"query": "Velm"}, query="Velm",
                       observation="Velm is a town on the Oder.", thought="I should search Velm.",
                       raw="Action: Search[Velm]"),
            FinalStep(tool_name="Finish", args={"answer": "Oder"}, answer="Oder", observation="Answer is CORRECT",
                      thought="The river is the Oder.", raw="Action: Finish[Oder]"),
        ], final_answer="Oder", end_reason="final", judgments=em, metadata=meta),
        # `--- END OF EXAMPLES ---` is the same marker in another dress.
        _traj(run, "autoact", q2, [
            SearchStep(tool_name="Search", args={"query": "Velm Review"}, query="Velm Review",
                       observation="The Velm Review was founded by Ada Brenn.", thought="Search it.",
                       raw="Action: Search[Velm Review]"),
            FinalStep(tool_name="Finish", args={"answer": "Ada Brenn"}, answer="Ada Brenn",
                      observation="Answer is CORRECT", raw="Action: Finish[Ada Brenn]"),
        ], final_answer="Ada Brenn", end_reason="final", judgments=em, metadata=meta),
    ]


def test_fewshot_prompt_field_in_a_react_jsonl():
    [t] = import_file(F / "fewshot_prompt.jsonl")
    assert detect_format(F / "fewshot_prompt.jsonl") == "react"
    assert (t.question.question_id, t.question.text, t.question.gold_answer) == (
        "f1", "Which river flows through Velm?", "Oder")
    assert [(s.tool_name, s.args) for s in t.steps] == [("Search", {"query": "Velm"}), ("Finish", {"answer": "Oder"})]


def test_examples_in_every_episode_of_a_text_log_are_dropped_and_the_real_episodes_kept():
    from trajscope.ingest.importers import TextPatterns
    from trajscope.ingest.importers._episodes import split_episodes

    block = ("Question: example A?\nAction 1: Finish[a]\nQuestion: example B?\nAction 1: Finish[b]\n"
             "(END OF EXAMPLES)\n")
    text = block + "Question: real one?\nAction 1: Finish[x]\n" + block + "Question: real two?\nAction 1: Finish[y]\n"
    layout = split_episodes(text, TextPatterns())
    assert [e.text.split("\n")[0] for e in layout.episodes] == ["Question: real one?", "Question: real two?"]


# --- item 4: mapping candidates given as title strings -----------------------------------------------

def test_mapping_candidates_as_title_strings_make_gold_retrieval_measurable(tmp_path):
    from trajscope.warehouse import open_readonly

    log, mapping = F / "titles_pipeline.jsonl", F / "titles_pipeline.yaml"
    t1, t2 = import_file(log, mapping=mapping)
    assert [[c.chunk_id for c in s.candidates] for s in t1.steps if s.__struct_config__.tag == "search"] == [
        ["title:Velm", "title:Brenn"], ["title:Oder"]]
    assert [c.rank for c in t1.steps[0].candidates] == [1, 2]
    assert t1.question.gold_chunk_ids == ["title:Velm", "title:Oder"]
    db = tmp_path / "w.duckdb"
    result = CliRunner().invoke(cli, ["ingest", str(log), "--mapping", str(mapping), "--db", str(db)])
    assert result.exit_code == 0, result.output
    with open_readonly(db) as con:
        rows = con.execute("SELECT question_id, n_gold, n_gold_retrieved, all_gold_retrieved, evidence_recall "
                           "FROM trajectory_evidence ORDER BY question_id").fetchall()
    # Independently: t1 retrieved Velm and Oder (both of its gold titles), t2 none of its one.
    assert rows == [("t1", 2, 2, True, 1.0), ("t2", 1, 0, False, 0.0)]


def test_a_scalar_candidate_is_an_id_when_the_mapping_maps_only_id(tmp_path):
    mapping = tmp_path / "m.yaml"
    mapping.write_text((F / "titles_pipeline.yaml").read_text().replace(
        "  candidates: titles", "  candidates: titles\n  candidate: {id: id}"))
    t1, _ = import_file(F / "titles_pipeline.jsonl", mapping=mapping)
    assert [c.chunk_id for c in t1.steps[0].candidates] == ["Velm", "Brenn"]


# --- item 3: questions files carrying gold evidence; a file keyed by line number -----------------------

def test_questions_file_supporting_facts_become_gold_title_passages():
    t1, t2 = import_file(F / "fewshot_autoact.jsonl", questions=F / "questions_evidence.json")
    # [title, sentence id] pairs name passages by title, each once, in order (list and dict-of-lists forms).
    assert (t1.question.gold_chunk_ids, t1.question.gold_match, t1.question.gold_paragraphs) == (
        ["title:Velm", "title:Oder"], "title", 2)
    assert t2.question.gold_chunk_ids == ["title:Velm Review", "title:Ada Brenn"]


def test_questions_file_keyed_by_line_number_refuses_ids_it_lacks():
    from trajscope.format import RecordError

    # The file's keys 0, 1 are its ids: a log whose ids are c1, c2 does not join (it never joins by guess).
    with pytest.raises(RecordError, match="question id 'c1' or index 0 not found in questions_by_line.jsonl"):
        list(import_file(CHAT, questions=F / "questions_by_line.jsonl"))


def test_questions_by_line_number_join_and_keep_passage_ids(tmp_path):
    log = tmp_path / "log.jsonl"
    rows = [json.loads(x) for x in CHAT.read_text().splitlines()[:2]]
    for i, r in enumerate(rows):
        r.pop("id", None), r.pop("qid", None)
        r["idx"] = i
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    t0, t1 = import_file(log, questions=F / "questions_by_line.jsonl")
    assert (t0.question.question_id, t0.question.gold_chunk_ids, t0.question.gold_match) == ("0", ["d7", "d9"], "given")
    assert (t1.question.question_id, t1.question.gold_chunk_ids) == ("1", ["title:Velm Review"])


def test_questions_titles_match_a_mapping_corpus(tmp_path):
    qfile = tmp_path / "q.json"
    qfile.write_text(json.dumps({"d1": {"question": "Q?", "supporting_facts": [["Tobias Lorring", 0],
                                                                             ["Nowhere Gazette", 1]]}}))
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"qid": "d1", "question": "Q?"}) + "\n")
    mapping = tmp_path / "m.yaml"
    mapping.write_text("question_id: qid\nquestion: question\ncorpus: demo\n")
    [t] = import_file(data, mapping=mapping, questions=qfile)
    # demo:60 is the demo corpus's `Tobias Lorring`; the other title is not in it and stays a title id
    assert t.question.gold_chunk_ids == ["demo:60", "title:Nowhere Gazette"]


# --- item 2: a Jupyter notebook whose code-cell outputs hold printed episodes ------------------------------

def test_notebook_outputs_convert_to_exactly_the_expected_records():
    nb = F / "react_fever.ipynb"
    assert detect_format(nb) == "notebook"
    run = "notebook:react_fever.ipynb"

    def q(idx: str, text: str) -> Question:
        return Question(question_id=idx, text=text, gold_answer="SUPPORTS")

    def scored(em: bool, f1: float) -> list[Judgment]:
        return [Judgment(judge="em", score=float(em), rationale=f"source result: em={em!r}"),
                Judgment(judge="f1", score=float(f1), rationale=f"source result: f1={f1!r}")]

    def result(idx: int, answer: str, ok: bool, f1) -> dict:
        return {"steps": 2, "answer": answer, "gt_answer": "SUPPORTS", "question_idx": idx, "reward": ok,
                "em": ok, "f1": f1}

    def at(output: int, line: int) -> str:  # the step's position: cell 1's output and the line printing it
        return f"cell:1/output:{output}/line:{line}"

    def search(arg: str, obs: str, thought: str, ref: str) -> SearchStep:
        return SearchStep(tool_name="Search", args={"query": arg}, query=arg, observation=obs, thought=thought,
                          raw=f"Action: Search[{arg}]", source_ref=ref)

    def finish(arg: str, obs: str, thought: str, ref: str) -> FinalStep:
        return FinalStep(tool_name="Finish", args={"answer": arg}, answer=arg, observation=obs, thought=thought,
                         raw=f"Action: Finish[{arg}]", source_ref=ref)

    same_claim = "Ada Brenn founded a journal."
    assert [to_builtins(t) for t in import_file(nb)] == [
        _traj(run, "notebook", q("3", "Velm is a town on the Oder."), [
            search("Velm", "Velm is a town on the river Oder, founded in 1201.", "I need to search Velm.", at(0, 3)),
            finish("SUPPORTS", "Episode finished, reward = 1", "The claim is supported.", at(0, 7)),
        ], final_answer="SUPPORTS", end_reason="final", judgments=scored(True, 1.0),
            metadata={"source_line": 1, "trailer": "1 1 1.0 4.2\n-----------",
                      "result": result(3, "SUPPORTS", True, 1.0)}),
        # Two claims with the same text are two questions: their printed ids differ (no `:attempt2` run).
        _traj(run, "notebook", q("7", same_claim), [
            search("Ada Brenn", "Ada Brenn founded the Velm Review in 1871.", "Search Ada Brenn.", at(0, 17)),
            finish("SUPPORTS", "Episode finished, reward = 1", "Supported.", at(0, 21)),
        ], final_answer="SUPPORTS", end_reason="final", judgments=scored(True, 1.0),
            metadata={"source_line": 15, "trailer": "2 2 1.0 4.0\n-----------",
                      "result": result(7, "SUPPORTS", True, 1.0)}),
        _traj(run, "notebook", q("11", same_claim), [
            # "Invalid action: finish[...]": the environment refused it, so it is no final.
            ErrorStep(error_type="invalid_action", message="Invalid action: finish[REFUTES] because she did not.",
                      tool_name="Finish", args={"answer": "REFUTES"},
                      observation="Invalid action: finish[REFUTES] because she did not.",
                      raw="Action: Finish[REFUTES] because she did not.", thought="I think it is refuted.",
                      source_ref=at(2, 3)),
            finish("REFUTES", "Episode finished, reward = 0", "Answer properly.", at(2, 7)),
        ], final_answer="REFUTES", end_reason="final", judgments=scored(False, 0),
            metadata={"source_line": 29, "trailer": "2 3 0.6666666666666666 4.1\n-----------",
                      "result": result(11, "REFUTES", False, 0)}),
        # No Finish before the step limit: ended by budget (the printed answer is empty).
        _traj(run, "notebook", q("12", "The Oder is 840 km long."), [
            search("Oder", "The Oder is a river in Central Europe.", "Search the Oder.", at(2, 17)),
            ToolStep(tool_name="Lookup", args={"argument": "length"}, observation="No more results.",
                     thought="Look up its length.", raw="Action: Lookup[length]", source_ref=at(2, 21)),
        ], end_reason="budget", judgments=scored(False, 0),
            metadata={"source_line": 43, "trailer": "2 4 0.5 4.3\n-----------\n\n0.5",
                      "result": result(12, "", False, 0)}),
    ]


def test_notebook_in_one_command_prints_its_import_report(tmp_path):
    result = CliRunner().invoke(cli, ["ingest", str(F / "react_fever.ipynb"), "--db", str(tmp_path / "w.duckdb")])
    assert result.exit_code == 0, result.output
    assert "(notebook): 4 trajectories in 1 run(s)" in result.output
    assert "steps: final 3, search 3, error 1, tool 1" in result.output
    assert "end reasons final 3, budget 1" in result.output


def test_the_same_transcript_as_plain_text_gives_the_same_records(tmp_path):
    from trajscope.ingest.importers._notebook import _text

    nb = json.loads((F / "react_fever.ipynb").read_text())
    text = "".join(_text(o.get("text")) for o in nb["cells"][1]["outputs"] if o.get("name") == "stdout")
    (tmp_path / "fever.txt").write_text(text)
    assert detect_format(tmp_path / "fever.txt") == "react"
    plain = [(t.question.question_id, t.final_answer, t.end_reason, [j.score for j in t.judgments])
             for t in import_file(tmp_path / "fever.txt")]
    assert plain == [("3", "SUPPORTS", "final", [1.0, 1.0]), ("7", "SUPPORTS", "final", [1.0, 1.0]),
                     ("11", "REFUTES", "final", [0.0, 0.0]), ("12", None, "budget", [0.0, 0.0])]


def test_new_readers_state_the_nesting_limit(tmp_path):
    from trajscope.format import RecordError

    deep = "[" * 500 + "]" * 500
    rec = json.loads(CHAT.read_text().splitlines()[0])
    rec["messages"][3]["content"] = deep  # a tool result that is JSON text nested past the limit
    (tmp_path / "c.jsonl").write_text(json.dumps(rec) + "\n")
    with pytest.raises(RecordError, match="nesting limit"):
        list(import_file(tmp_path / "c.jsonl"))
    (tmp_path / "n.ipynb").write_text('{"cells": ' + deep + "}")
    with pytest.raises(RecordError, match="nesting limit"):
        list(import_file(tmp_path / "n.ipynb"))


# --- item 10: the source's own scorer verdict is kept beside trajscope's normalised EM -------------------

def test_a_source_scorer_verdict_is_kept_and_a_normalised_em_that_disagrees_is_shown(tmp_path):
    from trajscope.engine.judge_pass import judge_run
    from trajscope.warehouse import open_readonly

    log = F / "inspect_ctf_flags.json"
    db = tmp_path / "w.duckdb"
    result = CliRunner().invoke(cli, ["ingest", str(log), "--db", str(db)])
    assert result.exit_code == 0, result.output
    report = judge_run(db, "inspect:inspect_ctf_flags.json")
    # f1 submitted `flag{a|\/|b}` for `flag{a|/|b}`: SQuAD normalisation drops the punctuation, so EM says 1;
    # the source's exact `includes` scorer said I. Both verdicts stay; the conflict is counted and shown.
    assert report.source_conflicts == 1
    assert "1 where trajscope's normalised verdict disagrees with the source's own" in report.summary()
    with open_readonly(db) as con:
        rows = con.execute("SELECT question_id, source_judge, source_score, trajscope_judge, trajscope_score "
                           "FROM verdict_conflicts").fetchall()
        kept = con.execute("SELECT judge, score, origin FROM judgments j JOIN trajectories t USING (trajectory_id) "
                           "WHERE t.question_id = 'f1' ORDER BY judge").fetchall()
        correct = con.execute("SELECT question_id, correct, correct_by FROM trajectory_correctness "
                              "ORDER BY question_id").fetchall()
    assert rows == [("f1", "contain", 0.0, "em", 1.0)]
    assert kept == [("contain", 0.0, "record"), ("em", 1.0, "judge"), ("f1", 1.0, "judge")]
    # Correctness still follows the source's verdict (Contain-Acc is the source's here), not the normalised EM.
    assert correct == [("f1", False, "contain"), ("f2", True, "contain")]


def test_corpus_matches_title_passages_everywhere_in_the_trajectory(tmp_path):
    """--corpus: gold titles of a questions file and the pages a ReAct agent opened become the same chunk ids."""
    log = tmp_path / "react.jsonl"
    log.write_text(json.dumps({"id": "d1", "messages": [
        {"role": "user", "content": "Question: When was the company of Tobias Lorring founded?"},
        {"role": "assistant", "content": "Thought: open his page.\nAction: Retrieve[Tobias Lorring]"},
        {"role": "user", "content": "Observation: Tobias Lorring founded a company."},
        {"role": "assistant", "content": "Action: Finish[1901]"}]}) + "\n")
    qfile = tmp_path / "q.json"
    qfile.write_text(json.dumps([{"id": "d1", "question": "When was the company of Tobias Lorring founded?",
                                  "answer": "1901", "supporting_facts": [["Tobias Lorring", 0],
                                                                         ["Nowhere Gazette", 2]]}]))
    plain = convert_file(log, tmp_path / "a.jsonl", _options(questions=qfile))
    matched = convert_file(log, tmp_path / "b.jsonl", _options(questions=qfile, corpus="demo"))
    before, after = (_lines(r.output)[0] for r in (plain, matched))
    assert before["question"]["gold_chunk_ids"] == ["title:Tobias Lorring", "title:Nowhere Gazette"]
    assert before["steps"][0]["chunk_ids"] == ["title:Tobias Lorring"]  # the same id as its gold: measurable
    # demo:60 is the demo corpus's `Tobias Lorring`; `Nowhere Gazette` is in no chunk and stays a title id
    assert after["question"]["gold_chunk_ids"] == ["demo:60", "title:Nowhere Gazette"]
    assert after["question"]["dataset"] == "demo"
    assert after["steps"][0]["chunk_ids"] == ["demo:60"] and after["steps"][0]["passages"][0]["chunk_id"] == "demo:60"
    assert any("1 title(s) not in corpus demo" in w for w in matched.warnings)


def _options(**kw):
    from trajscope.ingest.importers import ImportOptions

    return ImportOptions(**kw)


def test_a_label_pointing_at_a_notebook_line_joins_its_step(tmp_path):
    labels = tmp_path / "labels.jsonl"
    labels.write_text(json.dumps({"question_id": "11", "source_ref": "cell:1/output:2/line:7",
                                  "category": "refused"}) + "\n")
    db = tmp_path / "w.duckdb"
    result = CliRunner().invoke(cli, ["ingest", str(F / "react_fever.ipynb"), "--labels", str(labels), "--db", str(db)])
    assert result.exit_code == 0, result.output
    with open_readonly(db) as con:
        rows = con.execute("SELECT t.question_id, h.step_index, h.source_ref, s.kind FROM human_step_labels h "
                           "JOIN trajectories t USING (trajectory_id) "
                           "JOIN steps s ON s.trajectory_id = h.trajectory_id AND s.step_index = h.step_index"
                           ).fetchall()
    # Episode 11's second action (its accepted Finish) is printed on line 7 of cell 1's third output.
    assert rows == [("11", 1, "cell:1/output:2/line:7", "final")]
