"""Inspect AI's own writer compresses `.eval` members with Zstandard: trajscope reads such a log, within
the same archive limits as a DEFLATE one (bench/peers.py writes such logs)."""
from __future__ import annotations

import json
import zipfile
from pathlib import Path

import inspect_ai.log as inspect_log  # the test extra (pyproject.toml) installs it
import pytest

from trajscope.format import RecordError
from trajscope.ingest.importers import ImportOptions, convert_file
from trajscope.ingest.importers._archive import MAX_EXPANSION
from trajscope.warehouse import ingest_paths, open_readonly

ZSTD = 93  # the zip method number of Zstandard


def _write_inspect_log(path: Path) -> None:
    from inspect_ai.model import ChatMessageAssistant, ChatMessageTool, ChatMessageUser, ModelOutput
    from inspect_ai.scorer import Score
    from inspect_ai.tool import ToolCall

    samples = []
    for epoch in (1, 2):
        for q in range(3):
            answer = "paris" if (q + epoch) % 2 else "lyon"
            samples.append(inspect_log.EvalSample(
                id=f"q{q}", epoch=epoch, input=f"capital {q}?", target="paris",
                messages=[ChatMessageUser(content=f"capital {q}?"),
                          ChatMessageAssistant(content="", tool_calls=[
                              ToolCall(id="c1", function="search", arguments={"query": "capital"})]),
                          ChatMessageTool(content="Paris is the capital.", tool_call_id="c1", function="search"),
                          ChatMessageAssistant(content=answer)],
                output=ModelOutput.from_content("mockllm/model", answer),
                scores={"exact": Score(value="C" if answer == "paris" else "I", answer=answer)}))
    log = inspect_log.EvalLog(
        status="success", samples=samples,
        eval=inspect_log.EvalSpec(created="2026-01-01T00:00:00+00:00", task="t", model="mockllm/model",
                                  dataset=inspect_log.EvalDataset(name="d"), config=inspect_log.EvalConfig()))
    inspect_log.write_eval_log(log, str(path), format="eval")


def test_a_log_written_by_inspect_ai_is_zstd_and_ingests_with_its_scores_per_epoch(tmp_path):
    log = tmp_path / "written.eval"
    _write_inspect_log(log)
    with zipfile.ZipFile(log) as archive:
        samples = [i for i in archive.infolist() if i.filename.startswith("samples/")]
        assert len(samples) == 6 and {i.compress_type for i in samples} == {ZSTD}
    report = convert_file(log, tmp_path / "canonical.jsonl", ImportOptions(run_id="r"))
    db = tmp_path / "w.duckdb"
    assert ingest_paths(db, [report.output]).new == 6
    with open_readonly(db) as con:
        rows = con.execute("SELECT run_id, n_trajectories, em FROM run_summary ORDER BY run_id").fetchall()
    # Epoch 1: q0 and q2 right (2 of 3); epoch 2: q1 right (1 of 3).
    assert rows == [("r", 3, pytest.approx(2 / 3)), ("r:epoch2", 3, pytest.approx(1 / 3))]


def test_a_zstd_archive_past_the_amplification_limit_is_refused(tmp_path):
    import zipfile_zstd  # noqa: F401 - as the importer does before Python 3.14

    header = {"version": 2, "status": "success", "eval": {"task": "t", "model": "m", "dataset": {"name": "d"}}}
    bomb = tmp_path / "bomb.eval"
    with zipfile.ZipFile(bomb, "w", ZSTD) as archive:
        archive.writestr("header.json", json.dumps(header))
        for i in range(100):  # 2 MB of one letter each: zstd shrinks it far past MAX_EXPANSION
            archive.writestr(f"samples/{i:03d}_epoch_1.json", json.dumps({"id": f"s{i}", "input": "a" * 2**21}))
    assert sum(i.file_size for i in zipfile.ZipFile(bomb).infolist()) > MAX_EXPANSION * bomb.stat().st_size
    with pytest.raises(RecordError, match="amplification limit"):
        convert_file(bomb, tmp_path / "out.jsonl", ImportOptions(run_id="b"))
