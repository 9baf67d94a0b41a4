"""Outputs never replace inputs: `data sample` / `data import` refuse an --out that is (or links to) the
folder they read, and `export` / `export-traces` refuse a path that is a log the warehouse was built from;
conflicting copies of one trajectory id in two files of one ingest are refused (or one kept, as
--on-duplicate says, and the summary says so). Each refusal is one `Error:` line, every input and the
warehouse byte-identical."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parents[1] / "fixtures"


def _trajscope(*args: str, cwd: Path) -> tuple[int, list[str]]:
    child = subprocess.run([sys.executable, "-m", "trajscope", *args], capture_output=True, text=True,
                           timeout=300, cwd=cwd)
    return child.returncode, (child.stdout + child.stderr).splitlines()


def _one_error(lines: list[str]) -> str:
    assert not any("Traceback" in line for line in lines), "\n".join(lines)
    errors = [line for line in lines if line.startswith("Error:")]
    assert len(errors) == 1, "\n".join(lines)
    return errors[0]


def _tree(folder: Path) -> dict[str, str]:
    """Every file under folder, by relative name, with its content hash."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def five_questions(tmp_path) -> Path:
    rc, lines = _trajscope("data", "sample", "--dataset", "demo", "--n", "5", "--out", "ds1", cwd=tmp_path)
    assert rc == 0, lines
    folder = tmp_path / "ds1"
    assert len((folder / "questions.jsonl").read_text().splitlines()) == 5
    return folder


@pytest.mark.parametrize("out", ["ds1", "ds1-link", "./ds1/"])
def test_data_sample_refuses_to_write_over_the_dataset_it_reads(out, five_questions, tmp_path):
    (tmp_path / "ds1-link").symlink_to(five_questions)
    before = _tree(five_questions)
    rc, lines = _trajscope("data", "sample", "--dataset", "ds1", "--n", "3", "--out", out, cwd=tmp_path)
    error = _one_error(lines)
    assert rc != 0 and "is the folder the dataset is read from" in error, error
    assert _tree(five_questions) == before


def test_data_sample_into_another_folder_still_works(five_questions, tmp_path):
    rc, lines = _trajscope("data", "sample", "--dataset", "ds1", "--n", "3", "--out", "ds2", cwd=tmp_path)
    assert rc == 0, lines
    assert len((tmp_path / "ds2" / "questions.jsonl").read_text().splitlines()) == 3


@pytest.mark.parametrize("out", ["mq", "mq-link"])
def test_data_import_refuses_to_write_over_its_input(out, tmp_path):
    folder = tmp_path / "mq"
    folder.mkdir()
    shutil.copy(FIXTURES / "datasets" / "musique.jsonl", folder / "questions.jsonl")
    os.symlink(folder, tmp_path / "mq-link")
    before = _tree(folder)
    rc, lines = _trajscope("data", "import", "mq/questions.jsonl", "--format", "musique", "--out", out,
                           cwd=tmp_path)
    error = _one_error(lines)
    assert rc != 0 and "mq" in error and "is the folder the dataset is read from" in error, error
    assert _tree(folder) == before


@pytest.fixture
def built_from_a_log(tmp_path) -> tuple[Path, Path]:
    """A warehouse ingested from logs/run.jsonl (its source_file), and that log."""
    (tmp_path / "logs").mkdir()
    log = tmp_path / "logs" / "run.jsonl"
    shutil.copy(FIXTURES / "importers" / "autoact.jsonl", log)
    rc, lines = _trajscope("ingest", "logs/run.jsonl", "--db", "w.duckdb", cwd=tmp_path)
    assert rc == 0, lines
    (tmp_path / "log-link.jsonl").symlink_to(log)
    return tmp_path / "w.duckdb", log


@pytest.mark.parametrize("out", ["logs/run.jsonl", "log-link.jsonl"])
@pytest.mark.parametrize("command", [["export", "trajectories", "--format", "csv"],
                                     ["export-traces", "autoact:run.jsonl", "--format", "atif"]])
def test_an_export_never_replaces_a_log_the_warehouse_was_built_from(command, out, built_from_a_log, tmp_path):
    db, log = built_from_a_log
    before = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in (db, log)}
    rc, lines = _trajscope(*command, "--out", out, "--db", "w.duckdb", cwd=tmp_path)
    error = _one_error(lines)
    assert rc != 0 and out in error and "refused as the output file" in error, error
    assert {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in (db, log)} == before


def test_an_export_from_the_warehouse_folder_finds_the_log_by_its_recorded_name(built_from_a_log, tmp_path):
    _, log = built_from_a_log
    before = log.read_bytes()
    rc, lines = _trajscope("export", "trajectories", "--format", "csv", "--out", "run.jsonl", "--db", "../w.duckdb",
                           cwd=tmp_path / "logs")
    assert rc != 0 and "refused as the output file" in _one_error(lines)
    assert log.read_bytes() == before


def test_an_export_to_a_new_file_is_written(built_from_a_log, tmp_path):
    rc, lines = _trajscope("export-traces", "autoact:run.jsonl", "--format", "atif", "--out", "out.jsonl",
                           "--db", "w.duckdb", cwd=tmp_path)
    assert rc == 0, lines
    assert len((tmp_path / "out.jsonl").read_text().splitlines()) == 2  # the log's two trajectories


@pytest.fixture
def two_files_one_id(tmp_path) -> Path:
    """a.jsonl and b.jsonl holding different records under one trajectory id (and a.jsonl one more)."""
    sys.path.insert(0, str(FIXTURES / "app"))
    from app_fixture_records import app_trajectories

    from trajscope.format import encode

    first, other = (json.loads(encode(t)) for t in app_trajectories()[:2])
    changed = {**first, "final_answer": "a different answer"}
    (tmp_path / "a.jsonl").write_text(json.dumps(first) + "\n" + json.dumps(other) + "\n")
    (tmp_path / "b.jsonl").write_text(json.dumps(changed) + "\n")
    return tmp_path


def test_conflicting_copies_across_two_files_are_refused(two_files_one_id, tmp_path):
    before = {p.name: p.read_bytes() for p in tmp_path.glob("*.jsonl")}
    rc, lines = _trajscope("ingest", "a.jsonl", "b.jsonl", "--db", "w.duckdb", cwd=tmp_path)
    error = _one_error(lines)
    assert rc != 0 and "b.jsonl:1" in error and "a.jsonl line 1" in error and "hold different records" in error
    assert not (tmp_path / "w.duckdb").exists()
    assert {p.name: p.read_bytes() for p in tmp_path.glob("*.jsonl")} == before


@pytest.mark.parametrize("keep, answer_from", [("first", "a.jsonl"), ("last", "b.jsonl")])
def test_on_duplicate_keeps_one_copy_and_the_summary_says_so(keep, answer_from, two_files_one_id, tmp_path):
    rc, lines = _trajscope("ingest", "a.jsonl", "b.jsonl", "--db", "w.duckdb", "--on-duplicate", keep, cwd=tmp_path)
    assert rc == 0, lines
    assert any(f"1 duplicate id(s) with different content, kept the {keep} copy" in line for line in lines), lines
    record = json.loads((tmp_path / answer_from).read_text().splitlines()[0])
    rc, out = _trajscope("sql", f"SELECT final_answer FROM trajectories WHERE trajectory_id = "
                         f"'{record['trajectory_id']}'", "--db", "w.duckdb", cwd=tmp_path)
    assert rc == 0 and record["final_answer"] in "\n".join(out)
