"""One liveness check and one sweep of folders a killed process left: the loader's batch folders and the read
path's spill folders both go through warehouse._stale_dirs, and nothing else probes a pid."""
from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

from trajscope.runtime import pid_alive
from trajscope.runtime._stale_dirs import sweep_dead_process_dirs
from trajscope.warehouse import remove_stale_batch_dirs
from trajscope.warehouse.read import sweep_stale

ROOT = Path(__file__).resolve().parents[1]


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_only_a_dead_processs_folders_are_swept(tmp_path):
    dead = _dead_pid()
    assert not pid_alive(dead) and pid_alive(os.getpid())
    gone = [tmp_path / f"p-{dead}", tmp_path / f"p-{dead}-x1"]
    kept = [tmp_path / f"p-{os.getpid()}", tmp_path / f"p-{os.getppid()}-y", tmp_path / "p-abc", tmp_path / "q-1"]
    for folder in gone + kept:
        folder.mkdir()
    (tmp_path / f"p-{dead}.txt").write_text("a file, not a folder")
    assert sorted(sweep_dead_process_dirs(tmp_path, "p-")) == sorted(gone)
    assert all(k.is_dir() for k in kept) and (tmp_path / f"p-{dead}.txt").exists()


def test_the_loader_and_the_read_path_sweep_their_own_prefix(tmp_path, monkeypatch):
    from trajscope.warehouse._loader import _BATCH_DIR_PREFIX
    from trajscope.warehouse.read._tempdir import PREFIX

    dead = _dead_pid()
    batch, spill = tmp_path / f"{_BATCH_DIR_PREFIX}{dead}-1", tmp_path / f"{PREFIX}{dead}-2"
    batch.mkdir()
    spill.mkdir()
    assert remove_stale_batch_dirs(tmp_path) == [batch] and spill.exists()
    monkeypatch.setenv("TRAJSCOPE_READ_TMP", str(tmp_path))
    assert sweep_stale() == [spill]


def test_no_other_module_probes_a_pid():
    found = []
    for top in ("app", "engine", "ingest", "trajscope", "warehouse", "bench"):
        for path in (ROOT / top).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "kill" \
                        and len(node.args) == 2 and isinstance(node.args[1], ast.Constant) and node.args[1].value == 0:
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    # One probe, in pid_alive (its line moves as the module grows; the file and the count do not).
    assert [f.rpartition(":")[0] for f in found] == ["trajscope/runtime/_stale_dirs.py"], found
