"""Mapping files that express real formats: constants, question facts, candidates, errors, runs, declarations."""
from __future__ import annotations

from pathlib import Path

import pytest

from trajscope.format import (
    Candidate,
    ErrorStep,
    FinalStep,
    Judgment,
    Question,
    RecordError,
    Run,
    SearchStep,
    Trajectory,
    to_builtins,
)
from trajscope.ingest.importers import ImportOptions, convert_file, import_file

F = Path("tests/fixtures/importers")
PIPELINE, PIPELINE_MAP = F / "pipeline_per_question.json", F / "pipeline_per_question.yaml"
MULTI, MULTI_MAP = F / "multi_config.jsonl", F / "multi_config.yaml"


def test_per_question_pipeline_json_needs_no_preprocessing():
    ok, failed = import_file(PIPELINE, mapping=PIPELINE_MAP)
    rid = "mapped:pipeline_per_question.json"
    q = Question(question_id="p-001", text="Which journal was founded first, the Velm Review or the Oder Quarterly?",
                 dataset="velm-dev", gold_answer="the Velm Review", question_type="comparison", hop_count=2,
                 gold_chunk_ids=["title:Velm Review", "title:Oder Quarterly"], gold_match="title")
    assert to_builtins(ok) == to_builtins(Trajectory(
        trajectory_id=f"{rid}::p-001", run=Run(run_id=rid, source="import:mapped", dataset="velm-dev"), question=q,
        steps=[
            SearchStep(tool_name="search", args={"query": "Velm Review founded"}, query="Velm Review founded",
                       candidates=[Candidate(chunk_id="title:Velm Review", rank=1, score=14.25,
                                             snippet="The Velm Review is a literary journal founded in 1871."),
                                   Candidate(chunk_id="title:Velm", rank=2, score=3.5,
                                             snippet="Velm is a town on the Oder.")]),
            SearchStep(tool_name="search", args={"query": "Oder Quarterly founded"}, query="Oder Quarterly founded",
                       candidates=[Candidate(chunk_id="title:Oder Quarterly", rank=1, score=12.0,
                                             snippet="The Oder Quarterly first appeared in 1902.")]),
            FinalStep(answer="the Velm Review")],
        final_answer="the Velm Review", end_reason="final", metadata={"termination_reason": "ok"}))
    # The record with an API error is an error trajectory, not a `final` one.
    assert (failed.end_reason, failed.final_answer) == ("error", None)
    assert failed.error == "RateLimitError: 429 Too Many Requests"
    assert failed.steps[-1] == ErrorStep(error_type="source_error", message="RateLimitError: 429 Too Many Requests")


def test_mapping_declarations_reach_the_profile(tmp_path):
    report = convert_file(PIPELINE, tmp_path / "o.jsonl", ImportOptions(mapping=PIPELINE_MAP))
    (run,) = report.runs
    assert run.profile.read_action is False and run.profile.declared == ["read_action"]
    assert run.profile.search_candidates is True and run.profile.gold_passages is True
    assert run.profile.reasons["read_action"].startswith("declared false by mapping file pipeline_per_question.yaml")


def test_a_file_holding_several_configurations_becomes_one_run_each():
    out = list(import_file(MULTI, mapping=MULTI_MAP))
    assert [(t.run.run_id, t.run.condition, t.question.question_id, t.final_answer, t.judgments) for t in out] == [
        ("mapped:multi_config.jsonl:bm25-k5", "bm25-k5", "m1", "Velm", [Judgment(judge="em", score=1.0)]),
        ("mapped:multi_config.jsonl:bm25-k5", "bm25-k5", "m2", "1902", [Judgment(judge="em", score=0.0)]),
        ("mapped:multi_config.jsonl:dense-k5", "dense-k5", "m1", "Oder", [Judgment(judge="em", score=0.0)]),
        ("mapped:multi_config.jsonl:dense-k5", "dense-k5", "m2", "1871", [Judgment(judge="em", score=1.0)])]


def test_end_reason_vocabulary(tmp_path):
    data = tmp_path / "d.jsonl"
    data.write_text('{"id": "a", "q": "Q?", "out": "x", "why": "MAX_STEPS"}\n'
                    '{"id": "b", "q": "Q?", "out": "y", "why": "forced"}\n'
                    '{"id": "c", "q": "Q?", "out": "z", "why": "done"}\n')
    mapping = tmp_path / "m.yaml"
    mapping.write_text("question_id: id\nquestion: q\nprediction: out\nend_reason: why\n"
                       "end_reasons: {budget: [max_steps], forced_answer: forced, final: [done]}\n")
    a, b, c = import_file(data, mapping=mapping)
    assert (a.end_reason, [s.__struct_config__.tag for s in a.steps]) == ("budget", [])
    assert (b.end_reason, [s.__struct_config__.tag for s in b.steps]) == ("forced_answer", ["forced_answer"])
    assert (c.end_reason, [s.__struct_config__.tag for s in c.steps]) == ("final", ["final"])


def test_step_error_field_makes_an_error_step(tmp_path):
    data = tmp_path / "d.jsonl"
    data.write_text('{"id": "a", "q": "Q?", "steps": [{"tool": "read", "args": {"chunk_id": "c1"}, '
                    '"err": "no such chunk"}]}\n')
    mapping = tmp_path / "m.yaml"
    mapping.write_text("question_id: id\nquestion: q\nsteps: steps\n"
                       "step: {action: tool, arguments: args, error: err}\n")
    (t,) = import_file(data, mapping=mapping)
    assert t.steps == [ErrorStep(error_type="tool_error", message="no such chunk", tool_name="read",
                                 args={"chunk_id": "c1"})]


@pytest.mark.parametrize("text, line, field", [
    ("question_id: id\nquestion: q\nanswer_here: out\n", 3, "answer_here"),
    ("question_id: id\nstep:\n  action: tool\n  actoin: x\n", 4, "step.actoin"),
    ("question_id: id\n\nstep:\n  candidate:\n    rank: r\n", 5, "step.candidate.rank"),
    ("question_id: id\ndeclare:\n  read_action: maybe\n", 3, "declare.read_action"),
    ("question_id: id\nend_reasons:\n  done: [ok]\n", 3, "end_reasons.done"),
    ("question_id: id\ntool_map:\n  web: search\n  calc: compute\n", 4, "tool_map.calc"),
    ("question_id: id\nquestion: {constant: x}\n", 2, "question"),
])
def test_mapping_errors_name_the_line_of_the_key(tmp_path, text, line, field):
    mapping = tmp_path / "m.yaml"
    mapping.write_text(text)
    with pytest.raises(RecordError) as err:
        import_file(F / "mapped.jsonl", mapping=mapping)
    assert (err.value.path, err.value.line, err.value.field) == (str(mapping), line, field)


def test_gold_and_candidate_titles_match_a_named_corpus(tmp_path):
    data = tmp_path / "d.json"
    data.write_text('[{"qid": "d1", "question": "In which year was the company founded by Tobias Lorring established?",'
                    ' "support": ["Tobias Lorring", "Drawyn Telegraph"],'
                    ' "retrieval": [{"query": "Tobias Lorring", "hits": [{"title": "Tobias Lorring", "score": 2.0},'
                    ' {"title": "Nowhere Gazette", "score": 1.0}]}]},'
                    ' {"qid": "d2", "question": "Q?", "support": ["Tobias Lorring", "Nowhere Gazette"]}]')
    mapping = tmp_path / "m.yaml"
    mapping.write_text("question_id: qid\nquestion: question\ngold_titles: support\ncorpus: demo\nsteps: retrieval\n"
                       "step: {action: {const: search}, query: query, candidates: hits, "
                       "candidate: {title: title, score: score}}\n")
    report = convert_file(data, tmp_path / "o.jsonl", ImportOptions(mapping=mapping))
    d1, d2 = import_file(data, mapping=mapping)
    # the demo corpus names these chunks: ids demo:60 and demo:278, the demo dataset joined
    assert (d1.question.gold_chunk_ids, d1.question.gold_match, d1.question.dataset) == (
        ["demo:60", "demo:278"], "title", "demo")
    assert [c.chunk_id for c in d1.steps[0].candidates] == ["demo:60", "title:Nowhere Gazette"]
    assert d2.question.gold_chunk_ids == ["demo:60", "title:Nowhere Gazette"]
    assert report.warnings == ["line 1: question d2: 1 of 2 gold titles not in corpus demo (kept as title ids)"]


def test_a_corpus_that_cannot_be_loaded_names_the_mapping_line(tmp_path):
    mapping = tmp_path / "m.yaml"
    mapping.write_text("question_id: id\nquestion: q\ncorpus: no-such-dataset\n")
    with pytest.raises(RecordError) as err:
        list(import_file(F / "mapped.jsonl", mapping=mapping))
    assert (err.value.path, err.value.line, err.value.field) == (str(mapping), 3, "corpus")
