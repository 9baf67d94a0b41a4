"""Side files a user or a hostile folder supplies (mapping, tool map, patterns, questions, run matrix, lake
markers, `--param` values): a FIFO or /dev/zero is refused by type before it is opened, a marker past its size
limit is not read, a YAML alias bomb is refused within a memory bound; each is one `Error:` line, no traceback,
and the warehouse and every input stay byte-identical."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from trajscope.format import SIDE_FILE_LIMIT, SideFileError, read_side_text
from trajscope.warehouse.lake import MARKER_LIMIT

LOG = Path(__file__).parents[1] / "fixtures" / "importers" / "autoact.jsonl"
# Reports the child's peak resident memory (VmHWM) on stderr when the command ends, however it ends.
_RUNNER = """
import atexit, sys
def _peak():
    status = open("/proc/self/status").read()
    print("VmHWM_kB", status.split("VmHWM:")[1].split()[0], file=sys.stderr)
atexit.register(_peak)
sys.argv = ["trajscope", *sys.argv[1:]]
from trajscope.cli import main
main()
"""
# Under 300 bytes of nested aliases: 9**8 (43 million) strings once expanded.
_BOMB = "[" + ",".join(["&a [l,l,l,l,l,l,l,l,l]"] + [
    f"&{b} [" + ",".join([f"*{a}"] * 9) + "]" for a, b in zip("abcdefg", "bcdefgh", strict=True)]) + "]"


def _trajscope(*args: str, cwd: Path) -> tuple[int, list[str], int]:
    """Exit status, the output's lines, and the child's peak resident memory in MB; a hang fails at 120 s."""
    child = subprocess.run([sys.executable, "-c", _RUNNER, *args], capture_output=True, text=True, timeout=120,
                           cwd=cwd, env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])})
    lines = (child.stdout + child.stderr).splitlines()
    peak = [int(line.split()[1]) // 1024 for line in lines if line.startswith("VmHWM_kB")]
    return child.returncode, [line for line in lines if not line.startswith("VmHWM_kB")], peak[0]


def _one_error(lines: list[str]) -> str:
    assert not any("Traceback" in line for line in lines), "\n".join(lines)
    errors = [line for line in lines if line.startswith("Error:")]
    assert len(errors) == 1, "\n".join(lines)
    return errors[0]


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def fifo(tmp_path) -> Path:
    path = tmp_path / "side.yaml"
    os.mkfifo(path)
    return path


@pytest.fixture
def db(tmp_path, warehouse_db) -> Path:
    copy = tmp_path / "w.duckdb"
    shutil.copy(warehouse_db, copy)
    return copy


@pytest.mark.parametrize("flag", ["--mapping", "--tool-map", "--patterns", "--questions"])
@pytest.mark.parametrize("special", ["fifo", "/dev/zero"])
def test_a_special_side_file_of_ingest_is_refused_by_type(flag, special, fifo, db, tmp_path):
    side = str(fifo) if special == "fifo" else special
    before, log_before = _digest(db), _digest(LOG)
    rc, lines, peak_mb = _trajscope("ingest", str(LOG), flag, side, "--db", str(db), cwd=tmp_path)
    error = _one_error(lines)
    kind = "a FIFO (named pipe)" if special == "fifo" else "a character device"
    assert rc != 0 and side in error and f"is {kind}, not a regular file" in error, error
    assert peak_mb < 400  # /dev/zero read whole was a MemoryError
    assert _digest(db) == before and _digest(LOG) == log_before


@pytest.mark.parametrize("command", [["run"], ["report", "execution-rag"]])
@pytest.mark.parametrize("special", ["fifo", "/dev/zero"])
def test_a_special_run_matrix_is_refused_by_type(command, special, fifo, db, tmp_path):
    side = str(fifo) if special == "fifo" else special
    before = _digest(db)
    rc, lines, _ = _trajscope(*command, "--matrix", side, "--db", str(db), cwd=tmp_path)
    error = _one_error(lines)
    assert rc != 0 and side in error and "not a regular file" in error, error
    assert _digest(db) == before


def test_a_yaml_bomb_in_a_param_is_refused_within_a_memory_bound(tmp_path):
    assert len(_BOMB) <= 300
    rc, lines, peak_mb = _trajscope("run", "--dataset", "demo", "--controller", "direct", "--no-ingest",
                                    "--param", f"top_k={_BOMB}", cwd=tmp_path)
    error = _one_error(lines)
    assert rc != 0 and "--param" in error and "expansion limit of 100,000" in error, error
    assert peak_mb < 400  # before: 3.2-5.5 GB and growing
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize("command", [["run"], ["report", "execution-rag"]])
def test_a_yaml_bomb_in_matrix_params_is_refused_within_a_memory_bound(command, db, tmp_path):
    matrix = tmp_path / "matrix.yaml"
    matrix.write_text(f"dataset: demo\nparams:\n  top_k: {_BOMB}\nruns:\n  - controller: direct\n")
    before, matrix_before = _digest(db), _digest(matrix)
    rc, lines, peak_mb = _trajscope(*command, "--matrix", str(matrix), "--db", str(db), cwd=tmp_path)
    error = _one_error(lines)
    assert rc != 0 and "matrix.yaml" in error and "expansion limit of 100,000" in error, error
    assert peak_mb < 400
    assert _digest(db) == before and _digest(matrix) == matrix_before


def _lake(tmp_path: Path) -> Path:
    lake = tmp_path / "lake"
    (lake / "_committed").mkdir(parents=True)
    (lake / "_trajscope_lake.json").write_text(json.dumps({"format": 1}))
    return lake


def _good_commit(writer: str) -> dict:
    return {"writer": writer, "runs": ["r1"], "rows": {"trajectories": 3}, "host": "h",
            "committed_at": "2026-01-01T00:00:00Z"}


@pytest.mark.parametrize("marker, expected", [
    (b"{not json", "commit marker is not valid JSON"),
    (json.dumps({"writer": "w1", "runs": ["r1"]}).encode(), "field rows: expected a dict, found missing"),
    (json.dumps({**_good_commit("w1"), "runs": "r1"}).encode(), "field runs: expected a list, found a str"),
    (b"[" * 5000 + b"]" * 5000, "past the nesting limit of 100 levels"),
    (b"[1]", "commit marker is a JSON list, not an object"),
])
def test_lake_writers_on_a_malformed_commit_marker_is_one_line(marker, expected, tmp_path):
    lake = _lake(tmp_path)
    (lake / "_committed" / "w0").write_text(json.dumps(_good_commit("w0")))
    (lake / "_committed" / "w1").write_bytes(marker)
    rc, lines, _ = _trajscope("lake", "writers", str(lake), cwd=tmp_path)
    error = _one_error(lines)
    assert rc != 0 and str(lake / "_committed" / "w1") in error and expected in error, error
    assert (lake / "_committed" / "w1").read_bytes() == marker


def test_lake_writers_lists_well_formed_markers(tmp_path):
    lake = _lake(tmp_path)
    for writer in ("w0", "w1"):
        (lake / "_committed" / writer).write_text(json.dumps(_good_commit(writer)))
    rc, lines, _ = _trajscope("lake", "writers", str(lake), cwd=tmp_path)
    assert rc == 0 and lines == [f"2026-01-01T00:00:00Z  {w}  h  3 trajectories  runs: r1" for w in ("w0", "w1")]


@pytest.mark.parametrize("which", ["lake marker", "commit marker"])
@pytest.mark.parametrize("special", ["fifo", "huge"])
def test_a_special_or_huge_lake_marker_is_not_read(which, special, tmp_path):
    lake = _lake(tmp_path)
    target = lake / ("_trajscope_lake.json" if which == "lake marker" else "_committed/w1")
    target.unlink(missing_ok=True)
    if special == "fifo":
        os.mkfifo(target)
    else:  # a sparse file: its size is what counts, not its bytes on disk
        with open(target, "wb") as fh:
            fh.truncate(1 << 30)
    rc, lines, peak_mb = _trajscope("lake", "writers", str(lake), cwd=tmp_path)
    error = _one_error(lines)
    assert rc != 0 and str(target) in error, error
    if special == "fifo":
        assert "is a FIFO (named pipe), not a regular file" in error, error
    else:
        assert f"past the {which} size limit of 1.0 MB ({MARKER_LIMIT:,} bytes)" in error, error
        assert peak_mb < 400  # a 1 GB marker was read whole


def test_a_side_file_past_its_size_limit_is_refused(tmp_path):
    path = tmp_path / "mapping.yaml"
    with open(path, "wb") as fh:
        fh.truncate(SIDE_FILE_LIMIT + 1)
    with pytest.raises(SideFileError, match=r"past the mapping file size limit of 16.0 MB \(16,777,216 bytes\)"):
        read_side_text(path, "mapping file")


def test_a_price_table_is_read_as_a_side_file(fifo, tmp_path):
    from trajscope.engine.llm import load_price_table
    from trajscope.format import RecordError

    with pytest.raises(SideFileError, match="is a FIFO"):
        load_price_table(fifo)
    bomb = tmp_path / "prices.yaml"
    bomb.write_text(f"m: {_BOMB}\n")
    with pytest.raises(RecordError, match="expansion limit of 100,000"):
        load_price_table(bomb)
    fine = tmp_path / "fine.yaml"
    fine.write_text("m: &p [0.5, 1.5]\nn: *p\n")
    assert load_price_table(fine) == {"m": (0.5, 1.5), "n": (0.5, 1.5)}


@pytest.mark.parametrize("body", ["deep", "bomb"])
def test_a_weave_cassette_is_yaml_bounded_like_the_rest(body, db, tmp_path):
    cassette = tmp_path / "cassette.yaml"
    if body == "deep":
        text = "- request: {url: 'https://trace.wandb.ai/x'}\n  response: " + "[" * 5000 + "]" * 5000 + "\n"
    else:
        text = ("- request: {url: 'https://trace.wandb.ai/x'}\n"
                f"  response: {{status: 200, body: 'x', more: {_BOMB}}}\n")
    cassette.write_text(text)
    before = _digest(db)
    rc, lines, peak_mb = _trajscope("ingest", str(cassette), "--format", "weave", "--db", str(db), cwd=tmp_path)
    error = _one_error(lines)
    expected = "past the nesting limit of 100 levels" if body == "deep" else "expansion limit of 100,000"
    assert rc != 0 and "cassette.yaml" in error and expected in error, error
    assert peak_mb < 400 and _digest(db) == before
