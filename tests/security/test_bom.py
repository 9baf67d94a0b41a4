"""A UTF-8 byte-order mark (what Windows editors write first) changes nothing: the same format is
detected and the same records are read as from the file without it.

The issue's case: a BOM made a canonical log "unrecognised".
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from app_fixture_records import app_trajectories

from trajscope.format import UTF8_BOM, encode
from trajscope.ingest.importers import ImportOptions, convert_file, detect_format

ROOT = Path(__file__).parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "importers"
LOGS = ["openinference_spans.jsonl", "otel_genai_otlp.json", "atif_trajectory.json", "inspect_log.json",
        "react_fireact.json", "autoact.jsonl", "bridge-1.traj", "arag_predictions.jsonl", "react_transcript.txt",
        "react_fever.ipynb"]


def _pair(tmp_path: Path, name: str, data: bytes) -> tuple[Path, Path]:
    plain, marked = tmp_path / "plain" / name, tmp_path / "bom" / name
    for path, body in ((plain, data), (marked, UTF8_BOM + data)):
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(body)
    return plain, marked


def _records(path: Path, fmt: str | None, out: Path) -> list[bytes]:
    report = convert_file(path, out, ImportOptions(format=fmt, run_id="r"))
    return Path(report.output).read_bytes().removeprefix(UTF8_BOM).splitlines()


@pytest.mark.parametrize("name", LOGS)
def test_a_bom_changes_neither_the_format_nor_the_records(name, tmp_path):
    plain, marked = _pair(tmp_path, name, (FIXTURES / name).read_bytes())
    fmt = detect_format(plain)
    assert fmt is not None and detect_format(marked) == fmt
    assert _records(marked, None, tmp_path / "b.jsonl") == _records(plain, None, tmp_path / "p.jsonl")


def test_a_canonical_log_with_a_bom_ingests_like_one_without(tmp_path):
    data = b"".join(encode(t) + b"\n" for t in app_trajectories())
    plain, marked = _pair(tmp_path, "log.jsonl", data)
    assert detect_format(marked) == "canonical"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    counts = []
    for path in (plain, marked):
        db = path.with_suffix(".duckdb")
        result = subprocess.run([sys.executable, "-m", "trajscope", "ingest", str(path), "--db", str(db),
                                 "--no-progress"], capture_output=True, text=True, cwd=ROOT, timeout=120, env=env)
        assert result.returncode == 0, result.stdout + result.stderr
        with duckdb.connect(str(db), read_only=True) as con:
            counts.append(con.execute("SELECT count(*), count(DISTINCT trajectory_id) FROM trajectories").fetchone())
            counts.append(con.execute("SELECT count(*) FROM steps").fetchone())
    assert counts[0] == counts[2] == (len(app_trajectories()), len(app_trajectories())) and counts[1] == counts[3]


def test_a_mapping_file_with_a_bom_is_read(tmp_path):
    log = _pair(tmp_path, "mapped.jsonl", (FIXTURES / "mapped.jsonl").read_bytes())[0]
    plain_map, bom_map = _pair(tmp_path, "mapped.yaml", (FIXTURES / "mapped.yaml").read_bytes())
    for mapping in (plain_map, bom_map):
        report = convert_file(log, tmp_path / f"{mapping.parent.name}.jsonl",
                              ImportOptions(format="mapped", mapping=mapping))
        assert report.runs
    assert (tmp_path / "plain.jsonl").read_bytes() == (tmp_path / "bom.jsonl").read_bytes()
