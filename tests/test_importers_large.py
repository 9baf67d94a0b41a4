"""200 MB inputs are streamed: errors come with their line while memory stays far below the file size."""
from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest

from trajscope.format import RecordError
from trajscope.ingest.importers import import_file

MB = 1024 * 1024
F = Path("tests/fixtures/importers")


def _arag_record(i: int, payload: str) -> dict:
    return {"qid": f"q{i}", "question": "Q?", "gold_answer": "A", "pred_answer": "A", "total_cost": 0.0,
            "trajectory": [{"tool_name": "semantic_search", "arguments": {"query": "x"}, "tool_result": payload}]}


def _peak_while_importing(path: Path, **kw) -> tuple[RecordError, int, int]:
    tracemalloc.start()
    count = 0
    try:
        with pytest.raises(RecordError) as info:
            for _ in import_file(path, **kw):
                count += 1
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return info.value, count, peak


@pytest.mark.slow
def test_200mb_jsonl_streams_to_a_bad_last_record(tmp_path):
    path = tmp_path / "big.jsonl"
    payload = "x" * MB
    n = 200
    with open(path, "w") as fh:
        for i in range(n):
            fh.write(json.dumps(_arag_record(i, payload)) + "\n")
        fh.write('{"question": "no id here"}\n')
    assert path.stat().st_size > 200 * MB
    err, count, peak = _peak_while_importing(path, format="arag")
    assert (err.line, err.field, count) == (n + 1, "qid", n)
    assert peak < 40 * MB, f"peak traced memory {peak / MB:.0f} MB"


@pytest.mark.slow
def test_200mb_json_document_streams_record_by_record(tmp_path):
    path = tmp_path / "big_fireact.json"
    record = json.loads((F / "react_fireact.json").read_text())["1"]
    record["traj"][2]["content"] = "Observation: " + "y" * MB
    n = 200
    with open(path, "w") as fh:
        fh.write("{\n")
        for i in range(n):
            fh.write(f'"{i}": {json.dumps(record)},\n')
        fh.write('"bad": {"traj": [{"role": "user", "content": 7}]}\n}\n')
    assert path.stat().st_size > 200 * MB
    err, count, peak = _peak_while_importing(path, format="react")
    assert (err.line, err.field, count) == (n + 2, "bad.traj[0].content", n)
    assert peak < 40 * MB, f"peak traced memory {peak / MB:.0f} MB"


def test_a_single_huge_line_is_refused_without_reading_it_whole(tmp_path, monkeypatch):
    from trajscope.ingest.importers import _json_stream

    monkeypatch.setattr(_json_stream, "MAX_RECORD_BYTES", 8 * MB)
    path = tmp_path / "one_line.jsonl"
    with open(path, "w") as fh:
        fh.write('{"qid": "q", "blob": "')
        chunk = "z" * MB
        for _ in range(200):
            fh.write(chunk)
        fh.write('"}\n')
    err, count, peak = _peak_while_importing(path, format="arag")
    assert (err.line, count) == (1, 0) and "8 MB" in err.message
    assert peak < 40 * MB, f"peak traced memory {peak / MB:.0f} MB"
