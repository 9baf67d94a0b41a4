"""Malformed input, per format: a RecordError naming file, line and field; never a traceback or a guess."""
from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from trajscope.format import RecordError
from trajscope.ingest.importers import FORMATS, import_file

F = Path("tests/fixtures/importers")


def error_of(path: Path, **kw) -> RecordError:
    with pytest.raises(RecordError) as info:
        list(import_file(path, **kw))
    return info.value


def write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return path


# --- truncated files ---------------------------------------------------------------------------------

@pytest.mark.parametrize("fixture, fmt", [
    ("react_fireact.json", "react"), ("atif_trajectory.json", "atif"), ("inspect_log.json", "inspect"),
    ("otel_genai_otlp.json", "otel_genai"),
])
def test_truncated_json_document(tmp_path, fixture, fmt):
    text = (F / fixture).read_text()
    cut = write(tmp_path, fixture, text[: len(text) * 2 // 3])
    err = error_of(cut, format=fmt)
    assert err.path == str(cut)
    assert 1 < err.line <= text[: len(text) * 2 // 3].count("\n") + 1
    assert "truncated" in err.message


@pytest.mark.parametrize("fixture, fmt, kw", [
    ("arag_predictions.jsonl", "arag", {}),
    ("openinference_spans.jsonl", "openinference", {}),
    ("mapped.jsonl", "mapped", {"mapping": F / "mapped.yaml"}),
])
def test_truncated_jsonl_last_line(tmp_path, fixture, fmt, kw):
    lines = (F / fixture).read_text().splitlines()
    cut = write(tmp_path, fixture, "\n".join(lines[:-1] + [lines[-1][: len(lines[-1]) // 2]]))
    err = error_of(cut, format=fmt, **kw)
    assert (err.path, err.line) == (str(cut), len(lines))
    assert "truncated JSON" in err.message


# --- wrong types -------------------------------------------------------------------------------------

def test_react_wrong_type_of_transcript(tmp_path):
    data = json.loads((F / "react_fireact.json").read_text())
    data["1"]["traj"] = 42
    bad = write(tmp_path, "r.json", json.dumps(data, indent=2))
    err = error_of(bad, questions=F / "react_questions.json")
    assert (err.line, err.field) == (2, "1.traj")
    assert "expected an array" in err.message


def test_react_message_without_role(tmp_path):
    data = json.loads((F / "react_fireact.json").read_text())
    del data["0"]["traj"][1]["role"]
    bad = write(tmp_path, "r.json", json.dumps(data))
    assert error_of(bad).field == "0.traj[1].role"


def test_arag_wrong_type_in_a_step(tmp_path):
    lines = (F / "arag_predictions.jsonl").read_text().splitlines()
    record = json.loads(lines[0])
    record["trajectory"][1]["cost"] = "cheap"
    bad = write(tmp_path, "p.jsonl", "\n".join([lines[1], json.dumps(record)]))
    err = error_of(bad, format="arag")
    assert (err.line, err.field) == (2, "trajectory[1].cost")


def test_atif_tool_calls_not_a_list(tmp_path):
    doc = json.loads((F / "atif_trajectory.json").read_text())
    doc["steps"][2]["tool_calls"] = {"function_name": "search"}
    err = error_of(write(tmp_path, "a.json", json.dumps(doc)))
    assert err.field == "steps[2].tool_calls" and "expected an array" in err.message


def test_inspect_scores_wrong_type(tmp_path):
    log = json.loads((F / "inspect_log.json").read_text())
    log["samples"][1]["scores"] = ["C"]
    text = json.dumps(log, indent=1)
    err = error_of(write(tmp_path, "i.json", text))
    assert err.field == "samples[1].scores"
    lines = text.splitlines()
    # The error names the line where the offending sample's object opens.
    assert err.line == next(i for i, line in enumerate(lines) if '"id": 7' in line)


def test_otel_int_value_that_is_not_an_integer(tmp_path):
    text = (F / "otel_genai_otlp.json").read_text().replace('"intValue": "150"', '"intValue": "lots"')
    err = error_of(write(tmp_path, "o.json", text), format="otel_genai")
    assert err.field.endswith("attributes[2].value.intValue")


def test_mapping_file_with_an_unknown_key(tmp_path):
    bad = write(tmp_path, "m.yaml", (F / "mapped.yaml").read_text() + "answer_here: output\n")
    err = error_of(F / "mapped.jsonl", mapping=bad)
    assert (err.path, err.field) == (str(bad), "answer_here")


def test_tool_map_to_a_non_canonical_action():
    assert error_of(F / "arag_predictions.jsonl", tool_map={"calculator": "compute"}).field == "tool_map"


# --- missing ids -------------------------------------------------------------------------------------

def test_arag_missing_question_id(tmp_path):
    lines = (F / "arag_predictions.jsonl").read_text().splitlines()
    record = json.loads(lines[0])
    del record["qid"]
    err = error_of(write(tmp_path, "p.jsonl", json.dumps(record)), format="arag")
    assert (err.line, err.field) == (1, "qid")


def test_mapped_missing_question_id(tmp_path):
    record = json.loads((F / "mapped.jsonl").read_text())
    record["meta"] = {}
    err = error_of(write(tmp_path, "m.jsonl", "\n" + json.dumps(record)), mapping=F / "mapped.yaml")
    assert (err.line, err.field) == (2, "meta.uid")


def test_react_index_missing_from_the_question_file(tmp_path):
    data = {"99": json.loads((F / "react_fireact.json").read_text())["0"]}
    err = error_of(write(tmp_path, "r.json", json.dumps(data, indent=2)), questions=F / "react_questions.json")
    assert (err.line, err.field) == (2, "99") and "not found" in err.message


def test_inspect_sample_without_id(tmp_path):
    log = json.loads((F / "inspect_log.json").read_text())
    del log["samples"][0]["id"]
    assert error_of(write(tmp_path, "i.json", json.dumps(log))).field == "samples[0].id"


def test_openinference_span_without_trace_id(tmp_path):
    lines = (F / "openinference_spans.jsonl").read_text().splitlines()
    span = json.loads(lines[2])
    del span["context"]["trace_id"]
    err = error_of(write(tmp_path, "s.jsonl", "\n".join(lines[:2] + [json.dumps(span)])))
    assert (err.line, err.field) == (3, "context.trace_id")


def test_otel_span_without_span_id(tmp_path):
    doc = json.loads((F / "otel_genai_otlp.json").read_text())
    del doc["resourceSpans"][0]["scopeSpans"][0]["spans"][1]["spanId"]
    err = error_of(write(tmp_path, "o.json", json.dumps(doc)), format="otel_genai")
    assert err.field == "resourceSpans[0].scopeSpans[0].spans[1].spanId"


def test_atif_tool_call_without_function_name(tmp_path):
    doc = json.loads((F / "atif_trajectory.json").read_text())
    del doc["steps"][3]["tool_calls"][1]["function_name"]
    assert error_of(write(tmp_path, "a.json", json.dumps(doc))).field == "steps[3].tool_calls[1].function_name"


def test_spans_of_a_trace_that_was_already_completed(tmp_path):
    lines = (F / "openinference_spans.jsonl").read_text().splitlines()
    # t-1's root first, then t-2's root, then a t-1 child: t-1 was closed when t-2 began.
    order = [lines[0], lines[5], lines[1]]
    err = error_of(write(tmp_path, "s.jsonl", "\n".join(order)))
    assert err.line == 3 and "after that trace was completed" in err.message


# --- binary garbage ----------------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", [f for f in FORMATS if f != "mapped"] + ["mapped"])
def test_binary_garbage(tmp_path, fmt):
    garbage = write(tmp_path, "garbage.bin", bytes(range(256)) * 64)
    kw = {"mapping": F / "mapped.yaml"} if fmt == "mapped" else {}
    err = error_of(garbage, format=fmt, **kw)
    assert (err.path, err.line) == (str(garbage), 1)
    assert "binary" in err.message or "archive" in err.message


def test_binary_garbage_is_not_detected(tmp_path):
    garbage = write(tmp_path, "garbage.bin", b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8)
    err = error_of(garbage)
    assert "unrecognised log format" in err.message


def test_corrupt_eval_archive(tmp_path):
    good = tmp_path / "good.eval"
    with zipfile.ZipFile(good, "w") as zf:
        zf.writestr("header.json", "{}")
        zf.writestr("samples/1_epoch_1.json", '{"id": 1, "input": "q", "messages": [')
    err = error_of(good, format="inspect")
    assert err.path.endswith("good.eval!samples/1_epoch_1.json") and "malformed JSON" in err.message
