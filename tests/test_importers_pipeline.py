"""The one import path: capability profiles inferred and declared, the import report, CLI and Upload."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from trajscope.app.upload import ingest_upload, prepare_upload
from trajscope.cli import main as cli
from trajscope.format import Capabilities, RecordError, encode, iter_trajectories
from trajscope.ingest.importers import (
    NO_READ,
    ImportOptions,
    RunTally,
    convert_file,
    declare,
    detect_format,
    import_file,
    infer_capabilities,
    parse_declarations,
)
from trajscope.warehouse import open_readonly

F = Path("tests/fixtures/importers")


def profiles(path: Path, tmp_path: Path, **kw) -> dict[str, Capabilities]:
    out = tmp_path / "out.jsonl"
    report = convert_file(path, out, ImportOptions(**kw))
    assert report.output == out
    stamped = {d.trajectory.run.run_id: d.trajectory.run.capabilities for d in iter_trajectories(out)}
    assert stamped == {r.run_id: r.profile for r in report.runs}  # every record carries its run's profile
    return stamped


@pytest.mark.parametrize("fixture, fmt, expected", [
    # search with candidate ids and snippets, no read step in these two traces, gold from the root's metadata
    ("openinference_spans.jsonl", "openinference",
     dict(search_candidates=True, snippets=True, read_action=False, gold_answers=True, judgments=False)),
    # FireAct-style chat lists: web search text, Lookup is no read, gold from the question file, em/f1
    ("react_fireact.json", "react",
     dict(search_candidates=False, snippets=True, read_action=False, gold_answers=True, judgments=True)),
    ("react_trials.txt", "react",
     dict(search_candidates=False, snippets=True, read_action=False, gold_answers=True, judgments=True)),
    ("autoact.jsonl", "autoact",
     dict(search_candidates=False, snippets=True, read_action=True, gold_answers=True, judgments=True)),
    ("arag_predictions.jsonl", "arag",
     dict(search_candidates=True, snippets=True, read_action=True, gold_answers=True, judgments=True)),
    ("bridge-1.traj", "swe_agent",
     dict(search_candidates=False, snippets=True, read_action=True, gold_answers=False, judgments=False)),
])
def test_each_importer_infers_the_profile_its_data_supports(tmp_path, fixture, fmt, expected):
    kw = {"questions": F / "react_questions.json"} if fixture == "react_fireact.json" else {}
    assert detect_format(F / fixture) == fmt
    for profile in profiles(F / fixture, tmp_path, **kw).values():
        got = {k: getattr(profile, k) for k in expected}
        assert got == expected and profile.declared == [] and profile.gold_passages is False
        if not profile.read_action:
            assert profile.reasons["read_action"].startswith(NO_READ)


def test_a_declaration_overrides_the_inference_and_says_so(tmp_path):
    (profile,) = profiles(F / "arag_predictions.jsonl", tmp_path, declare={"read_action": False}).values()
    assert profile.read_action is False and profile.declared == ["read_action"]
    assert profile.reasons["read_action"] == f"declared false by --declare ({NO_READ})"
    assert profile.search_candidates is True  # the rest stays inferred


def test_declarations_parse_strictly():
    assert parse_declarations(["read_action=false", "gold_passages=YES"]) == {"read_action": False,
                                                                             "gold_passages": True}
    for bad in ("read=false", "read_action", "read_action=maybe"):
        with pytest.raises(ValueError, match="NAME=true|false"):
            parse_declarations([bad])


def test_inference_reasons_count_what_the_records_hold():
    tally = RunTally()
    for t in import_file(F / "arag_predictions.jsonl"):
        tally.add(t)
    profile = infer_capabilities(tally)
    assert profile.reasons["search_candidates"] == "1 of 2 search steps list candidate chunk ids"
    assert profile.reasons["read_action"] == "2 read steps open a full passage"
    assert declare(profile, {}, "x") is profile


def test_canonical_is_detected_and_keeps_the_profile_it_carries(tmp_path):
    (t,) = list(import_file(F / "react_transcript.txt"))
    log = tmp_path / "run.jsonl"
    log.write_bytes(encode(t) + b"\n")
    assert detect_format(log) == "canonical"
    report = convert_file(log, tmp_path / "copy.jsonl")
    # loaded as it is: no copy written, nothing carried, so the warehouse infers the profile
    assert report.output == log and not (tmp_path / "copy.jsonl").exists() and report.runs[0].profile is None
    (declared,) = profiles(log, tmp_path, declare={"read_action": True}).values()
    assert declared.read_action is True and declared.declared == ["read_action"]


def test_identical_records_are_dropped_and_reported_differing_ones_refused(tmp_path):
    lines = [x for x in (F / "arag_predictions.jsonl").read_text().splitlines() if x.strip()]
    dup = tmp_path / "dup.jsonl"
    dup.write_text("\n".join([lines[0], lines[1], lines[0]]) + "\n")
    report = convert_file(dup, tmp_path / "out.jsonl")
    assert report.trajectories == 2
    assert report.duplicates == ["record 3: identical to record 1 (trajectory arag:dup.jsonl::q1); counted once"]
    record = json.loads(lines[0])
    record["pred_answer"] = "Someone else"
    dup.write_text("\n".join([lines[0], json.dumps(record)]) + "\n")
    with pytest.raises(RecordError, match="records 1 and 2 are both trajectory 'arag:dup.jsonl::q1'"):
        convert_file(dup, tmp_path / "out.jsonl")


def test_import_report_lines(tmp_path):
    report = convert_file(F / "react_fireact.json", tmp_path / "o.jsonl",
                          ImportOptions(questions=F / "react_questions.json"))
    lines = report.lines()
    assert lines[0] == f"{F / 'react_fireact.json'} (react): 2 trajectories in 1 run(s)"
    assert lines[1:6] == ["  steps: final 2, tool 2, search 1", "  unmapped tools: Lookup 1, click 1",
                          "  duplicates dropped: 0", "  gold answers: 2 of 2; judgments found: em 2, f1 2 "
                          "(2 trajectories)", "  questions joined: 2 from react_questions.json"]
    assert "    capabilities: search_candidates=no, snippets=yes, read_action=no, gold_answers=yes, " \
           "gold_passages=no, judgments=yes" in lines


def test_an_empty_file_is_reported_as_empty(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n  \n")
    with pytest.raises(RecordError, match="empty file"):
        list(import_file(empty))


def test_jsonl_records_holding_a_transcript_are_detected(tmp_path):
    log = tmp_path / "t.jsonl"
    log.write_text(json.dumps({"id": "v1", "question": "Where is Velm?",
                               "transcript": "Thought: Search.\nAction: Search[Velm]\nObservation: In Poland.\n"
                                             "Action: Finish[Poland]"}) + "\n")
    assert detect_format(log) == "react"
    (t,) = import_file(log)
    assert (t.question.question_id, t.final_answer) == ("v1", "Poland")


def test_cli_ingest_prints_the_report_and_records_the_original_file(tmp_path):
    db = tmp_path / "w.duckdb"
    result = CliRunner().invoke(cli, ["ingest", str(F / "react_trials.txt"), "--db", str(db),
                                      "--declare", "read_action=false"])
    assert result.exit_code == 0, result.output
    assert "react_trials.txt (react): 5 trajectories in 2 run(s)" in result.output
    assert "duplicates dropped: 1" in result.output and "read_action=no*" in result.output
    with open_readonly(db) as con:
        files = {r[0] for r in con.execute("SELECT DISTINCT source_file FROM trajectories").fetchall()}
    assert files == {str(F / "react_trials.txt")}


def test_cli_refuses_a_bad_declaration(tmp_path):
    result = CliRunner().invoke(cli, ["ingest", str(F / "react_trials.txt"), "--db", str(tmp_path / "w.duckdb"),
                                      "--declare", "reads=false"])
    assert result.exit_code != 0 and "--declare" in result.output and not (tmp_path / "w.duckdb").exists()


def test_upload_converts_once_records_its_name_and_deletes_its_temp_files(tmp_path):
    db = tmp_path / "w.duckdb"
    prepared = prepare_upload("my trials.txt", (F / "react_trials.txt").read_bytes(), declare={"judgments": False})
    assert prepared.ok and prepared.format == "react" and prepared.records == 5
    assert prepared.report.runs[0].profile.declared == ["judgments"]
    folder = prepared.folder
    assert folder.is_dir()
    report = ingest_upload(db, prepared)
    assert report.new == 5 and not folder.exists()
    with open_readonly(db) as con:
        assert con.execute("SELECT DISTINCT source_file FROM trajectories").fetchall() == [("upload:my trials.txt",)]


def test_a_failed_upload_leaves_no_temp_files():
    prepared = prepare_upload("empty.jsonl", b"   \n")
    assert not prepared.ok and prepared.errors[0].message.startswith("empty file")
    assert not prepared.folder.exists()
