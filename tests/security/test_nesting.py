"""A record nested 1,000 or 100,000 levels deep, in every importer family and side file, is a stated limit.

Each case goes through `python -m trajscope ingest` (a real subprocess) and through the Upload page's
preparation, side files included (a tool map, which the page does not take, through `convert_file`): one line naming the
file, the line and the field path of the deep value and the limit, no traceback, the warehouse unchanged.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from deep_inputs import build_cases
from security_limits import fingerprint

from trajscope.format import NESTING_LIMIT, RecordError

ROOT = Path(__file__).parents[2]
DEPTHS = [1000, 100_000]
LIMIT_TEXT = f"past the nesting limit of {NESTING_LIMIT} levels"


@pytest.fixture(scope="module")
def target_db(warehouse_db, tmp_path_factory) -> tuple[Path, tuple]:
    """A copy of the security warehouse for ingest attempts, and its fingerprint before any."""
    db = tmp_path_factory.mktemp("nesting-wh") / "wh.duckdb"
    shutil.copyfile(warehouse_db, db)
    return db, fingerprint(db)


@pytest.fixture(scope="module", params=DEPTHS, ids=lambda d: f"{d}-levels")
def cases(request, tmp_path_factory):
    folder = tmp_path_factory.mktemp(f"deep-{request.param}")
    return {c.name: c for c in build_cases(folder, request.param)}


CASE_NAMES = [
    "canonical record", "openinference record", "openinference JSON-string attribute", "otel_genai record",
    "otel_genai JSON-string attribute", "atif record", "atif JSON-string arguments", "inspect .json sample",
    "inspect .eval archive", "react (FireAct JSON)", "autoact record", "swe_agent .traj", "arag record",
    "mapped record", "mapped JSON-string arguments", "mapping file (YAML)", "mapping file (JSON)",
    "tool-map file (JSON)", "patterns file (YAML)", "questions file (JSON)",
]


def test_every_case_is_listed(tmp_path):
    assert sorted(c.name for c in build_cases(tmp_path, 2)) == sorted(CASE_NAMES)


def _expected_where(case, shown_path: str) -> str:
    return f"{shown_path}:{case.line}: field {case.field}"


@pytest.mark.parametrize("name", CASE_NAMES)
def test_cli_ingest_states_the_nesting_limit(name, cases, target_db):
    case = cases[name]
    db, before = target_db
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    result = subprocess.run([sys.executable, "-m", "trajscope", "ingest", *case.cli_args(), "--db", str(db),
                             "--no-progress"], capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert "Traceback" not in output and "RecursionError" not in output, output[-2000:]
    errors = [line for line in output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, output[-2000:]
    where = case.error_file if case.error_file.suffix != ".eval" else f"{case.error_file}!samples/1_epoch_1.json"
    assert _expected_where(case, str(where)) in errors[0], errors[0][:500]
    assert LIMIT_TEXT in errors[0]
    assert fingerprint(db) == before


@pytest.mark.parametrize("name", CASE_NAMES)
def test_upload_path_states_the_nesting_limit(name, cases, target_db):
    from trajscope.app.upload import prepare_upload
    from trajscope.ingest.importers import ImportOptions, convert_file, load_tool_map

    case = cases[name]
    db, before = target_db
    if "tool_map" not in case.side_files:  # the page takes the log and a mapping, questions or patterns file
        sides = {role: (path.name, path.read_bytes()) for role, path in case.side_files.items()}
        prepared = prepare_upload(case.main.name, case.main.read_bytes(), format=case.format, **sides)
        assert not prepared.ok and len(prepared.errors) == 1, prepared
        error = prepared.errors[0]
        shown = case.error_file.name
        if case.main.suffix == ".eval":
            shown += "!samples/1_epoch_1.json"
        assert not prepared.folder.exists()  # a refused upload leaves nothing behind
    else:  # the page takes no tool map: the conversion it calls, given the loaded map
        with pytest.raises(RecordError) as refused:
            tool_map = load_tool_map(case.tool_map)
            convert_file(case.main, case.main.parent / "out.jsonl", ImportOptions(
                format=case.format, mapping=case.mapping, tool_map=tool_map))
        error, shown = refused.value, str(case.error_file)
    assert error.path.endswith(shown) and error.line == case.line, (error.path, error.line, shown, case.line)
    assert error.field.startswith(case.field), error.field
    assert LIMIT_TEXT in error.message
    assert fingerprint(db) == before


@pytest.mark.parametrize("depth", DEPTHS)
@pytest.mark.parametrize("fixture, name", [("musique.jsonl", "deep.jsonl"), ("hotpotqa_list.json", "deep.json")])
def test_a_deep_dataset_record_is_a_stated_limit(fixture, name, depth, tmp_path):
    from deep_inputs import deep_json

    from trajscope.ingest.datasets import DatasetError, load_dataset

    source = (ROOT / "tests" / "fixtures" / "datasets" / fixture).read_text()
    marker = '"question": '
    line = source[:source.index(marker)].count("\n") + 1
    path = tmp_path / name
    path.write_text(source.replace(marker, f'"deep": {deep_json(depth)}, {marker}', 1))
    with pytest.raises(DatasetError) as refused:
        load_dataset(path)
    error = refused.value
    assert (error.path, error.line) == (str(path), line) and error.field.startswith("deep.a.a"), str(error)[:300]
    assert LIMIT_TEXT in error.message
    result = subprocess.run([sys.executable, "-m", "trajscope", "data", "import", str(path), "--out",
                             str(tmp_path / "out")], capture_output=True, text=True, cwd=ROOT, timeout=120,
                            env=dict(os.environ, PYTHONPATH=str(ROOT)))
    output = result.stdout + result.stderr
    assert result.returncode != 0 and "Traceback" not in output, output[-2000:]
    assert f"{path}:{line}: field deep.a.a" in output and LIMIT_TEXT in output, output[-2000:]
    assert not (tmp_path / "out").exists()
