"""The durable run log: torn-tail repair, corrupt-middle refusal, group-committed appends."""
from __future__ import annotations

import asyncio

import pytest

from trajscope.engine.runs import LogCorrupt, TrajectoryLog, recover_log
from trajscope.format import Question, Run, Trajectory, encode, iter_trajectories


def trajectory(i: int) -> Trajectory:
    return Trajectory(trajectory_id=f"r::q{i}", run=Run(run_id="r"), question=Question(question_id=f"q{i}", text="t"))


def write_lines(path, count: int) -> bytes:
    data = b"".join(encode(trajectory(i)) + b"\n" for i in range(count))
    path.write_bytes(data)
    return data


def test_torn_last_line_is_truncated(tmp_path):
    path = tmp_path / "r.jsonl"
    good = write_lines(path, 3)
    path.write_bytes(good + encode(trajectory(3))[:25])
    state = recover_log(path)
    assert state.done_ids == {"q0", "q1", "q2"} and state.truncated_bytes == 25
    assert path.read_bytes() == good and state.run.run_id == "r"


def test_unreadable_final_line_with_newline_is_treated_as_torn(tmp_path):
    path = tmp_path / "r.jsonl"
    good = write_lines(path, 2)
    path.write_bytes(good + b"\x00\x00\x00\n")
    assert recover_log(path).done_ids == {"q0", "q1"} and path.read_bytes() == good


def test_corrupt_middle_line_is_refused_with_its_line_number(tmp_path):
    path = tmp_path / "r.jsonl"
    lines = write_lines(path, 3).split(b"\n")
    path.write_bytes(b"\n".join([lines[0], b'{"oops": 1}', lines[2], b""]))
    with pytest.raises(LogCorrupt, match="r.jsonl:2"):
        recover_log(path)


def test_missing_log_is_empty(tmp_path):
    state = recover_log(tmp_path / "none.jsonl")
    assert state.done_ids == set() and state.run is None


def test_concurrent_appends_are_all_written_in_full_lines(tmp_path):
    path = tmp_path / "r.jsonl"

    async def go() -> int:
        log = TrajectoryLog(path)
        await asyncio.gather(*(log.append(trajectory(i)) for i in range(50)))
        log.close()
        return log.written

    assert asyncio.run(go()) == 50
    logged = sorted(d.trajectory.question.question_id for d in iter_trajectories(path))
    assert logged == sorted(f"q{i}" for i in range(50))


def test_the_bottom_layer_log_reports_its_repair_and_where_appends_resume(tmp_path):
    from trajscope.format import AppendOnlyLog, decode_trajectory, recover_log_file

    path = tmp_path / "r.jsonl"
    good = write_lines(path, 3)
    path.write_bytes(good + b"\n" + encode(trajectory(3))[:40])
    state = recover_log_file(path, decode_trajectory)
    assert (state.truncated_bytes, state.torn_line, state.size, state.lines) == (40, 5, len(good) + 1, 4)
    assert state.repair_note() == (f"{path}: repaired a torn last line (line 5, 40 bytes cut: a write the kill "
                                   "interrupted); its record is redone")
    log = AppendOnlyLog(path)
    assert log.durable_size == state.size
    end = log.append_many([encode(trajectory(3)), encode(trajectory(4))])
    assert end == path.stat().st_size and log.written == 2
    with pytest.raises(ValueError, match="single line"):
        log.append(b"two\nlines")
    log.close()
    assert recover_log_file(path, decode_trajectory).repair_note() is None


def test_runs_and_audits_share_the_one_log_module():
    # Neither keeps a private copy of the recovery or of the fsync'd write.
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    for module in ("engine/runs/_log.py", "engine/audit/_log.py"):
        text = (root / module).read_text()
        assert "recover_log_file" in text and "AppendOnlyLog" in text, module
        assert "os.fsync" not in text and "truncate(" not in text, module
