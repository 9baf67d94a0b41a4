"""Who&When hand-crafted files (a long history first, agents in `role`) and a malformed TRAIL annotation file
in a --labels directory: detected, read, skipped with one line and counted. Expected values come from the
raw files."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
from click.testing import CliRunner

from trajscope.cli import main as cli
from trajscope.ingest.importers import convert_file, detect_format, import_file, read_label_file

WW = Path("../shared/data/external_logs/who_and_when/algorithm_generated")
TRAIL = Path("../shared/data/external_logs/trail_swe")


def _hand_crafted(tmp_path: Path) -> tuple[Path, dict]:
    """A real record rewritten as Magentic-One's hand-crafted files are: history first and past the sniffed head,
    the speaker in `role` (with a note such as `(thought)`), no `name`."""
    source = json.loads((WW / "1.json").read_text())
    history = [{"content": h["content"] + " " + "x" * 20_000, "role": f"{h['name']} (thought)"}
               for h in source["history"]]
    record = {"history": history, **{k: v for k, v in source.items() if k not in ("history", "system_prompt")}}
    path = tmp_path / "hand_crafted" / "1.json"
    path.parent.mkdir()
    path.write_text(json.dumps(record))
    assert path.read_text().index('"mistake_step"') > 65536
    return path, source


def test_a_hand_crafted_file_with_a_long_history_is_detected_and_its_agents_read_from_role(tmp_path):
    path, source = _hand_crafted(tmp_path)
    assert detect_format(path) == "who_and_when"
    (t,) = import_file(path)
    assert [s.agent for s in t.steps] == [h["name"] for h in source["history"]]
    (label,) = t.human_labels
    step = int(source["mistake_step"])
    assert (label.source_ref, label.agent) == (f"history:{step}", source["mistake_agent"])
    assert t.steps[step].agent == source["history"][step]["name"]


def test_a_malformed_who_and_when_file_is_skipped_and_the_directory_still_imports(tmp_path):
    folder = tmp_path / "ww"
    folder.mkdir()
    names = sorted(p.name for p in WW.glob("*.json"))[:3]
    for name in names:
        shutil.copy(WW / name, folder / name)
    broken = json.loads((folder / names[1]).read_text())
    broken["mistake_step"] = "ten"
    (folder / names[1]).write_text(json.dumps(broken))
    report = convert_file(folder, tmp_path / "out.jsonl")
    assert report.trajectories == 2
    assert report.skipped == [f"{folder / names[1]}:1: field mistake_step: expected a history index (an integer, "
                              "possibly as a string), got 'ten'"]


def test_one_malformed_trail_annotation_file_is_skipped_named_and_counted(tmp_path):
    annotations = tmp_path / "annotations"
    shutil.copytree(TRAIL / "annotations", annotations)
    files = sorted(annotations.glob("*.json"))
    broken = json.loads(files[0].read_text())
    broken["errors"][0].pop("location")
    files[0].write_text(json.dumps(broken))
    expected = sum(len(json.loads(f.read_text())["errors"]) for f in files[1:])
    notes: list[str] = []
    labelled = read_label_file(annotations, notes)
    assert sum(len(t.labels) for t in labelled) == expected and len(labelled) == len(files) - 1
    assert notes == [f"skipped: {files[0]}:1: field errors[0].location: missing span id",
                     "1 malformed label record(s) skipped"]
    traces = {json.loads(p.read_text())["trace_id"] for p in (TRAIL / "traces").glob("*.json")}
    loaded = sum(len(json.loads(f.read_text())["errors"]) for f in files[1:] if f.stem in traces)
    db = tmp_path / "w.duckdb"
    result = CliRunner().invoke(cli, ["ingest", str(TRAIL / "traces"), "--labels", str(annotations), "--db", str(db)])
    assert result.exit_code == 0, result.output
    assert f"labels: skipped: {files[0]}:1: field errors[0].location: missing span id" in result.output
    assert "labels: 1 malformed label record(s) skipped" in result.output
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT count(*) FROM human_step_labels").fetchone()[0] == loaded
