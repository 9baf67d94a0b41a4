"""A directory of logs beside its README, LICENSE and scripts: the documentation and code are skipped and named,
every other file must still be a log, and a directory left with none says what it skipped and did not read.
Expected values come from the raw files."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import pytest
import yaml
from click.testing import CliRunner

from trajscope.cli import main as cli
from trajscope.ingest.importers import convert_file, read_label_file
from trajscope.ingest.importers._detect import is_not_log

FIXTURE = Path("tests/fixtures/importers/logs_beside_docs")
WEAVE = Path("../shared/data/external_logs/formats/weave")
WHO_AND_WHEN = Path("../shared/data/external_logs/who_and_when")
TRAIL_ANNOTATIONS = Path("../shared/data/external_logs/trail_swe/annotations")


def _ingest(path: Path, db: Path):
    return CliRunner().invoke(cli, ["ingest", str(path), "--db", str(db)])


def _rows(db: Path) -> int:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute("SELECT count(*) FROM trajectories").fetchone()[0]


def _weave_traces(path: Path) -> int:
    """Distinct trace ids in a recorded Weave cassette's JSON response bodies (spans and chat view)."""
    traces = set()
    for interaction in yaml.safe_load(path.read_text(encoding="utf-8")):
        body = interaction["response"].get("body") or ""
        if not body.strip().startswith("{"):
            continue
        data = json.loads(body)
        traces.update(span["trace_id"] for span in data.get("spans") or [])
        if interaction["request"]["url"].endswith("/agents/traces/chat"):
            traces.add(data["trace_id"])
    return len(traces)


@pytest.mark.parametrize(("name", "skipped"), [
    ("README", True), ("README.md", True), ("LICENSE", True), ("license.txt", True), ("LICENSE-MIT", True),
    ("COPYING.LESSER", True), ("CITATION.cff", True), ("count.py", True), ("SOURCE.md", True), ("run.sh", True),
    ("readme_agent.json", False), ("notes.txt", False), ("trace.yaml", False), ("run.log", False),
    ("FEVER.ipynb", False), ("1.json", False), ("session", False), ("a.eval", False), ("b.jsonl.gz", False),
])
def test_the_rule_skips_documentation_and_code_but_keeps_every_format_a_log_can_have(name, skipped):
    assert is_not_log(Path(name)) is skipped


def test_the_real_weave_folder_ingests_its_one_log_and_names_the_files_it_skipped(tmp_path):
    logs = sorted(WEAVE.glob("*.yaml"))
    expected = sum(_weave_traces(p) for p in logs)
    report = convert_file(WEAVE, tmp_path / "out.jsonl")
    assert report.trajectories == expected
    assert report.not_logs == ["SOURCE.md", "count.py"]
    assert "  skipped 2 files that are not logs: SOURCE.md, count.py" in report.lines()
    db = tmp_path / "w.duckdb"
    result = _ingest(WEAVE, db)
    assert result.exit_code == 0, result.output
    assert "skipped 2 files that are not logs: SOURCE.md, count.py" in result.output
    assert _rows(db) == expected


def test_a_directory_with_readme_and_license_loads_its_logs_and_names_the_two_it_skipped(tmp_path):
    logs = [p for p in FIXTURE.iterdir() if p.suffix == ".json"]
    expected = sum(1 for p in logs if "history" in json.loads(p.read_text()))
    report = convert_file(FIXTURE, tmp_path / "out.jsonl")
    assert (report.trajectories, report.not_logs) == (expected, ["LICENSE", "README.md"])
    db = tmp_path / "w.duckdb"
    result = _ingest(FIXTURE, db)
    assert result.exit_code == 0, result.output
    assert "skipped 2 files that are not logs: LICENSE, README.md" in result.output
    assert _rows(db) == expected


@pytest.mark.parametrize(("stray", "text"), [("stray.json", '{"notes": "half writ'),
                                             ("notes.txt", "Run on the lab machine; see the README.\n")])
def test_a_stray_file_that_is_not_a_log_is_still_refused_by_name_and_nothing_is_written(tmp_path, stray, text):
    db = tmp_path / "w.duckdb"
    assert _ingest(FIXTURE, db).exit_code == 0
    before = _rows(db)
    folder = tmp_path / "logs_beside_docs"
    shutil.copytree(FIXTURE, folder)
    (folder / stray).write_text(text)
    result = _ingest(folder, db)
    assert result.exit_code != 0
    assert f"{folder / stray}:1: unrecognised log format" in result.output
    assert "nothing was written" in result.output
    assert _rows(db) == before


def test_the_real_who_and_when_top_folder_names_what_it_skipped_and_the_subdirectory_to_pass(tmp_path):
    entries = sorted(p for p in WHO_AND_WHEN.iterdir() if not p.name.startswith("."))
    files = [p.name for p in entries if p.is_file()]
    subdirectories = [p.name for p in entries if p.is_dir()]
    assert files == ["LICENSE"] and subdirectories == ["algorithm_generated"]
    db = tmp_path / "w.duckdb"
    assert _ingest(FIXTURE, db).exit_code == 0
    before = _rows(db)
    result = _ingest(WHO_AND_WHEN, db)
    assert result.exit_code != 0
    assert (f"{WHO_AND_WHEN}:0: no log files: skipped {files[0]} (not a log); subdirectories are not read: "
            f"{subdirectories[0]} — pass the subdirectory") in result.output
    assert _rows(db) == before


def test_a_trail_annotations_folder_with_a_readme_reads_its_labels_and_names_the_readme(tmp_path):
    annotations = tmp_path / "annotations"
    shutil.copytree(TRAIL_ANNOTATIONS, annotations)
    (annotations / "README.md").write_text("# TRAIL annotations\n\nOne JSON file of errors per trace.\n")
    files = sorted(annotations.glob("*.json"))
    expected = sum(len(json.loads(f.read_text())["errors"]) for f in files)
    notes: list[str] = []
    labelled = read_label_file(annotations, notes)
    assert (len(labelled), sum(len(t.labels) for t in labelled)) == (len(files), expected)
    assert notes == ["skipped 1 file that is not a label file: README.md"]


def test_the_python_api_result_names_the_files_a_directory_input_skipped(tmp_path):
    import trajscope

    lines: list[str] = []
    result = trajscope.ingest([WEAVE], db=tmp_path / "w.duckdb", echo=lines.append)
    # Every file of the folder but its one recorded cassette is documentation or code.
    expected = [WEAVE / p.name for p in sorted(WEAVE.iterdir()) if p.suffix != ".yaml"]
    assert {p.name for p in expected} == {"SOURCE.md", "count.py"}
    assert sorted(result.not_logs) == expected
    assert result.new == sum(_weave_traces(p) for p in WEAVE.glob("*.yaml"))
    assert any("skipped 2 files that are not logs: SOURCE.md, count.py" in line for line in lines)
