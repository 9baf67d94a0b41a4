"""A JSONL line past the line-size limit is one line naming file, line, its size and the limit.

The issue's case: a 200 MB line ended in DuckDB's "maximum_object_size of 67108864 bytes exceeded"
traceback. Here a 70 MB line (the limit is 64 MB) goes through `python -m trajscope ingest` as a
canonical log and as an OpenInference log, and through the loader's own reader.
"""
from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from app_fixture_records import app_trajectories
from security_limits import fingerprint

from trajscope.format import MAX_LINE_BYTES, RecordError, bounded_lines, encode

ROOT = Path(__file__).parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "importers"
BIG = 70 * 2**20
LIMIT_TEXT = f"past the line-size limit of {MAX_LINE_BYTES // 2**20} MB"


def _canonical_with_big_line(path: Path) -> None:
    lines = [encode(t).decode() for t in app_trajectories()[:3]]
    record = json.loads(lines[1])
    record["question"]["text"] = "x" * BIG
    lines[1] = json.dumps(record)
    path.write_text("\n".join(lines) + "\n")


def _openinference_with_big_line(path: Path) -> None:
    lines = [raw for raw in (FIXTURES / "openinference_spans.jsonl").read_text().splitlines() if raw.strip()]
    record = json.loads(lines[1])
    record["padding"] = "y" * BIG
    lines[1] = json.dumps(record)
    path.write_text("\n".join(lines) + "\n")


@pytest.fixture(scope="module")
def target_db(warehouse_db, tmp_path_factory) -> tuple[Path, tuple]:
    db = tmp_path_factory.mktemp("line-size-wh") / "wh.duckdb"
    shutil.copyfile(warehouse_db, db)
    return db, fingerprint(db)


@pytest.mark.parametrize("build, fmt", [(_canonical_with_big_line, None),
                                        (_openinference_with_big_line, "openinference")],
                         ids=["canonical", "openinference"])
def test_cli_ingest_names_file_line_size_and_limit(build, fmt, target_db, tmp_path):
    db, before = target_db
    log = tmp_path / "big.jsonl"
    build(log)
    args = [sys.executable, "-m", "trajscope", "ingest", str(log), "--db", str(db), "--no-progress"]
    if fmt:
        args += ["--format", fmt]
    result = subprocess.run(args, capture_output=True, text=True, cwd=ROOT, timeout=300,
                            env=dict(os.environ, PYTHONPATH=str(ROOT)))
    output = result.stdout + result.stderr
    assert result.returncode != 0, output[-2000:]
    assert "Traceback" not in output and "maximum_object_size" not in output, output[-2000:]
    errors = [line for line in output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, output[-2000:]
    assert f"{log}:2:" in errors[0] and "70.0 MB" in errors[0] and LIMIT_TEXT in errors[0], errors[0]
    assert fingerprint(db) == before


def test_the_loader_reader_refuses_the_line_before_duckdb(tmp_path, warehouse_db):
    from trajscope.warehouse import validate_log

    log = tmp_path / "big.jsonl"
    _canonical_with_big_line(log)
    with pytest.raises(RecordError) as refused:
        validate_log(log, workdir=tmp_path)
    assert (refused.value.path, refused.value.line) == (str(log), 2)
    assert LIMIT_TEXT in refused.value.message and "70.0 MB" in refused.value.message
    assert log.stat().st_size > BIG


@pytest.mark.parametrize("data, lines", [
    (b"abcd\nefgh\n", [b"abcd\n", b"efgh\n"]),  # exactly at the limit
    (b"abcd\r\nef", [b"abcd\r\n", b"ef"]),  # CR LF does not count; a last line without newline
])
def test_bounded_lines_keeps_lines_at_the_limit(data, lines):
    assert list(bounded_lines(io.BytesIO(data), "f.jsonl", limit=4)) == lines


@pytest.mark.parametrize("data, line", [(b"ok\nabcde\n", 2), (b"abcdefghij", 1), (b"a\nb\nabcde\r\nc\n", 3)])
def test_bounded_lines_refuses_a_longer_line_with_its_number(data, line):
    with pytest.raises(RecordError) as refused:
        list(bounded_lines(io.BytesIO(data), "f.jsonl", limit=4))
    assert refused.value.line == line and "line-size limit of 4 bytes" in refused.value.message
