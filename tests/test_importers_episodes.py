"""Text logs with many episodes: trials as runs, gold and verdicts from the text, duplicates counted once."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from trajscope.format import (
    ErrorStep,
    FinalStep,
    Judgment,
    Passage,
    Question,
    ReadStep,
    RecordError,
    Run,
    SearchStep,
    ToolStep,
    Trajectory,
    iter_trajectories,
    to_builtins,
)
from trajscope.ingest.importers import ImportOptions, convert_file, detect_format, import_file, text_question_id

F = Path("tests/fixtures/importers")
TRIALS = F / "react_trials.txt"
RIVER = "Which river flows through the town where Ada Brenn was born?"
BRIDGE = "In which city did the architect of the Varnholt Bridge die?"
MUSEUM = "What year was the museum that holds the Kessler archive founded?"


def _run(rid: str) -> Run:
    return Run(run_id=rid, source="import:react")


def _traj(rid: str, question: Question, steps: list, **fields) -> dict:
    return to_builtins(Trajectory(trajectory_id=f"{rid}::{question.question_id}", run=_run(rid), question=question,
                                  steps=steps, **fields))


@pytest.fixture(scope="module")
def trials() -> list[Trajectory]:
    return list(import_file(TRIALS))


def test_each_episode_is_a_trajectory_and_each_trial_a_run(trials):
    assert detect_format(TRIALS) == "react"
    assert [(t.run.run_id, t.question.text) for t in trials] == [
        ("react:react_trials.txt:trial1", RIVER), ("react:react_trials.txt:trial1", BRIDGE),
        ("react:react_trials.txt:trial1", MUSEUM),
        ("react:react_trials.txt:trial2", RIVER), ("react:react_trials.txt:trial2", BRIDGE)]


def test_question_ids_hash_the_text_so_trials_pair(trials):
    ids = [t.question.question_id for t in trials]
    assert ids[0] == ids[3] == text_question_id(RIVER) and ids[1] == ids[4] == text_question_id(BRIDGE)
    assert len(set(ids)) == 3 and not any("react_trials" in i for i in ids)
    assert text_question_id("  which RIVER flows through the town where ada brenn was born? ") == ids[0]


def test_a_correct_episode_with_its_gold_and_verdict(trials):
    rid = "react:react_trials.txt:trial1"
    q = Question(question_id=text_question_id(RIVER), text=RIVER, gold_answer="Oder")
    assert to_builtins(trials[0]) == _traj(rid, q, [
        SearchStep(tool_name="Search", args={"query": "Ada Brenn"}, query="Ada Brenn",
                   observation="Ada Brenn (born 1901 in Velm) was an engineer.",
                   thought="I need to search Ada Brenn and find where she was born.", raw="Action: Search[Ada Brenn]"),
        FinalStep(tool_name="Finish", args={"answer": "Oder"}, answer="Oder", observation="Answer is CORRECT",
                  thought="Velm lies on the Oder, so the answer is the Oder.", raw="Action: Finish[Oder]"),
    ], final_answer="Oder", end_reason="final",
        judgments=[Judgment(judge="em", score=1.0, rationale="source verdict: Answer is CORRECT")],
        metadata={"source_line": 8, "trial": 1, "section": "correct"})


def test_an_incorrect_episode_keeps_its_lookup_as_a_look_up_not_a_read(trials):
    t = trials[1]
    assert [type(s) for s in t.steps] == [SearchStep, ToolStep, FinalStep]
    assert t.steps[1].tool_name == "Lookup" and t.steps[1].args == {"argument": "died"}
    assert (t.final_answer, t.question.gold_answer) == ("Paris", "Lyon")
    assert t.judgments == [Judgment(judge="em", score=0.0, rationale="source verdict: Answer is INCORRECT")]


def test_a_halted_episode_ends_by_budget_with_its_last_thought_kept(trials):
    t = trials[2]
    assert t.end_reason == "budget" and t.final_answer is None and t.judgments == []
    assert t.question.gold_answer == "1911"
    assert t.metadata == {"source_line": 43, "trial": 1, "section": "halted",
                          "trailing_thought": "I should try another search."}


def test_a_reflection_glued_to_the_question_is_kept_and_an_unclosed_executed_action_accepted(trials):
    t = trials[4]
    assert t.question.text == BRIDGE
    assert t.metadata["preamble"].startswith("You have attempted to answer following question before and failed.")
    assert "- I trusted a look-up without checking the date" in t.metadata["preamble"]
    final = t.steps[-1]
    # `Finish[Lyon` lacks its bracket, but the environment ran it (it answered "Answer is CORRECT").
    assert isinstance(final, FinalStep) and final.answer == "Lyon" and t.final_answer == "Lyon"
    assert t.judgments[0].score == 1.0


def test_an_unclosed_action_the_environment_did_not_run_stays_an_error(tmp_path):
    log = tmp_path / "t.txt"
    log.write_text("Question: Where is Velm?\nThought 1: Search.\nAction 1: Search[Velm\n")
    (t,) = import_file(log)
    assert isinstance(t.steps[0], ErrorStep) and t.steps[0].error_type == "no_action"


def test_identical_duplicate_episodes_are_counted_once_and_reported(tmp_path):
    report = convert_file(TRIALS, tmp_path / "out.jsonl")
    assert report.trajectories == 5
    assert report.duplicates == [
        f"line 30: identical to the episode at line 19 (question {text_question_id(BRIDGE)}, "
        "run react:react_trials.txt:trial1); counted once"]
    assert report.warnings == []  # the file's own trial summaries agree with the episodes found


def test_the_same_question_again_with_other_content_is_a_further_attempt(tmp_path):
    log = tmp_path / "attempts.txt"
    log.write_text("Question: Where is Velm?\nAction 1: Finish[Poland]\nObservation 1: Answer is INCORRECT\n\n"
                   "Question: Where is Velm?\nAction 1: Finish[Germany]\nObservation 1: Answer is CORRECT\n")
    out = list(import_file(log, run_id="r"))
    assert [(t.run.run_id, t.question.question_id, t.final_answer) for t in out] == [
        ("r", text_question_id("Where is Velm?"), "Poland"),
        ("r:attempt2", text_question_id("Where is Velm?"), "Germany")]


def test_a_trial_summary_that_disagrees_is_a_warning(tmp_path):
    log = tmp_path / "t.txt"
    log.write_text(TRIALS.read_text().replace("Correct: 1, Incorrect: 2", "Correct: 3, Incorrect: 2"))
    report = convert_file(log, tmp_path / "out.jsonl")
    assert report.warnings == ["line 4: trial 1 summary says correct 3, the file holds 1"]


def test_patterns_file_changes_the_gold_and_verdict_wording(tmp_path):
    log = tmp_path / "t.txt"
    log.write_text("Question: Where is Velm?\nAction 1: Finish[Poland]\nObservation 1: WRONG\nGold: Germany\n")
    patterns = tmp_path / "p.yaml"
    patterns.write_text('gold: "^Gold: (?P<gold>.*)$"\nverdict_correct: "RIGHT"\nverdict_incorrect: "WRONG"\n')
    (t,) = import_file(log, patterns=patterns)
    assert t.question.gold_answer == "Germany" and t.judgments[0].score == 0.0


def test_a_bad_patterns_file_names_its_line_and_key(tmp_path):
    patterns = tmp_path / "p.yaml"
    patterns.write_text('gold: "^Gold: (?P<gold>.*)$"\nverdict_corect: "RIGHT"\n')
    with pytest.raises(RecordError) as err:
        import_file(TRIALS, patterns=patterns)
    assert (err.value.line, err.value.field) == (2, "verdict_corect")
    patterns.write_text('gold: "^Gold: (?P<gold>.*$"\n')
    with pytest.raises(RecordError) as err:
        import_file(TRIALS, patterns=patterns)
    assert (err.value.line, err.value.field) == (1, "gold") and "regular expression" in err.value.message


def test_text_episodes_join_a_question_file_by_text(tmp_path):
    questions = tmp_path / "q.json"
    questions.write_text('[{"id": "h1", "question": "which river flows through the town where Ada Brenn was born?",'
                         ' "answer": "Oder", "type": "bridge"}]')
    log = tmp_path / "t.txt"
    log.write_text(TRIALS.read_text().split("------------- BEGIN INCORRECT")[0])
    (t,) = import_file(log, questions=questions)
    assert (t.question.question_id, t.question.question_type) == ("h1", "bridge")


def test_autoact_transcript_retrieve_is_a_read_lookup_and_reflect_are_tools():
    path = F / "autoact.jsonl"
    assert detect_format(path) == "autoact"
    first, halted = import_file(path)
    assert [(type(s).__name__, s.tool_name) for s in first.steps] == [
        ("SearchStep", "BingSearch"), ("ReadStep", "Retrieve"), ("ToolStep", "Lookup"), ("FinalStep", "Finish"),
        ("ToolStep", "Reflect")]
    read = first.steps[1]
    assert isinstance(read, ReadStep) and read.args == {"entity": "Varnholt Bridge"}
    assert read.chunk_ids == ["title:Varnholt Bridge"] and read.passages == [Passage(chunk_id="title:Varnholt Bridge",
                                     text="The Varnholt Bridge is a bridge designed by Otto Kessler in 1921.")]
    assert first.judgments == [Judgment(judge="em", score=1.0, rationale="source field `correct`")]
    assert first.metadata["verdict"] == "Answer is CORRECT" and first.metadata["reward"] == 1.0
    assert first.metadata["preamble"].startswith("Solve a question answering task")
    assert (first.question.question_id, first.question.gold_answer) == (
        text_question_id("Who designed the Varnholt Bridge?"), "Otto Kessler")
    # A Retrieve that found no page opened nothing; the halted record ends by budget.
    assert halted.steps[0].passages == [] and halted.end_reason == "budget" and halted.final_answer is None


def test_swe_agent_traj_open_reads_a_file_submit_is_final():
    path = F / "bridge-1.traj"
    assert detect_format(path) == "swe_agent"
    (t,) = import_file(path)
    assert [(type(s).__name__, s.tool_name) for s in t.steps] == [
        ("SearchStep", "find_file"), ("ReadStep", "open"), ("ToolStep", "edit"), ("FinalStep", "submit")]
    assert t.steps[1].chunk_ids == ["bridge.py"] and t.steps[1].passages[0].chunk_id == "bridge.py"
    assert (t.question.question_id, t.question.text) == ("bridge-1", "ISSUE: the bridge span is wrong.")
    assert (t.final_answer, t.end_reason) == ("diff --git a/bridge.py", "final")
    # The fixture's history is cut short (one assistant turn for four entries): steps keep their trajectory index.
    assert [s.source_ref for s in t.steps] == ["trajectory:0", "trajectory:1", "trajectory:2", "trajectory:3"]


def test_swe_agent_steps_keep_the_history_index_of_their_assistant_turn(tmp_path):
    data = json.loads((F / "bridge-1.traj").read_text())
    actions = [e["action"] for e in data["trajectory"]]
    data["history"] = [{"role": "system", "content": "You are an agent."},
                       {"role": "user", "content": "DEMONSTRATION ...", "is_demo": True},
                       {"role": "user", "content": "ISSUE: the bridge span is wrong."}]
    for action in actions:
        data["history"] += [{"role": "assistant", "content": "t", "action": action}, {"role": "user", "content": "o"}]
    path = tmp_path / "bridge-2.traj"
    path.write_text(json.dumps(data))
    (t,) = import_file(path)
    assert [s.source_ref for s in t.steps] == ["history:3", "history:5", "history:7", "history:9"]
    # A history whose turns name other actions does not line up: the trajectory index is kept instead.
    data["history"][5]["action"] = "open elsewhere.py"
    path.write_text(json.dumps(data))
    (t,) = import_file(path)
    assert [s.source_ref for s in t.steps][:2] == ["trajectory:0", "trajectory:1"]


def test_converted_log_is_canonical_and_carries_the_profile(tmp_path):
    out = tmp_path / "out.jsonl"
    convert_file(TRIALS, out, ImportOptions())
    records = [d.trajectory for d in iter_trajectories(out)]
    assert len(records) == 5 and all(r.run.capabilities is not None for r in records)
    assert {r.run.capabilities.read_action for r in records} == {False}
