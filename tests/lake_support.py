"""Shared by the lake tests: synthetic logs, the ingest CLI in a subprocess, and rows compared across stores."""
from __future__ import annotations

import math
import os
import random
import subprocess
import sys
from pathlib import Path

import msgspec

from bench.synthetic import synthetic_trajectory
from trajscope.warehouse import open_readonly

ROOT = Path(__file__).resolve().parents[1]
# Set when the row is written, so it differs between any two loads of the same log.
LOAD_TIME_COLUMNS = {"ingested_at", "applied_at", "loaded_at", "created_at"}


def synthetic_log(path: Path, runs: list[str], n: int, seed: int, gold_shift: int = 0) -> Path:
    """A canonical log of n questions per run; question ids and golds as in every other log of this seed."""
    rng = random.Random(seed)
    encoder = msgspec.json.Encoder()
    with open(path, "wb") as out:
        for k, run_id in enumerate(runs):
            run = {"run_id": run_id, "source": "engine", "dataset": "synthetic", "controller": "read_gate",
                   "condition": ("baseline", "read_gate", "context_injection", "register")[k % 4],
                   "model": "synthetic-model", "seed": 0}
            for qid in range(n):
                record = synthetic_trajectory(rng, run, qid, n_chunks=500, seed=0)
                if gold_shift:
                    record["question"]["gold_answer"] += " (changed)"
                out.write(encoder.encode(record) + b"\n")
    return path


def three_logs(folder: Path) -> dict[str, Path]:
    """Logs a, b, c: two, two and three runs of 30, 25 and 20 questions, sharing question ids and golds."""
    return {
        "a": synthetic_log(folder / "a.jsonl", ["ra-base", "ra-gate"], 30, seed=1),
        "b": synthetic_log(folder / "b.jsonl", ["rb-base", "rb-gate"], 25, seed=2),
        "c": synthetic_log(folder / "c.jsonl", ["rc-base", "rc-inject", "rc-register"], 20, seed=3),
    }


def ingest_cli(*args: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    return subprocess.Popen([sys.executable, "-m", "trajscope", "ingest", *args], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def rows_of(db: Path, relation: str) -> list[tuple]:
    """Every row of a view or table, load-time columns left out, floats to 10 significant digits, sorted."""
    with open_readonly(db) as con:
        cols = [c for c, in con.execute(f"SELECT column_name FROM (DESCRIBE {relation})").fetchall()
                if c not in LOAD_TIME_COLUMNS]
        quoted = ", ".join(f'"{c}"' for c in cols)
        rows = con.execute(f"SELECT {quoted} FROM {relation}").fetchall()

    def norm(value):
        if isinstance(value, float):
            return None if math.isnan(value) else float(f"{value:.10g}")
        if isinstance(value, list):
            return tuple(norm(v) for v in value)
        if isinstance(value, dict):
            return tuple(sorted((k, norm(v)) for k, v in value.items()))
        return value

    return sorted((tuple(norm(v) for v in row) for row in rows), key=repr)


def check_dashboard_reads_a_commit_made_while_it_runs(lake: Path | str, logs: dict[str, Path], tmp_path: Path,
                                                      monkeypatch) -> None:
    """Serve `lake` (a folder or a URL) under AppTest; a commit made between two runs shows at the second."""
    from streamlit.testing.v1 import AppTest

    from trajscope.warehouse import ingest_paths
    from trajscope.warehouse.lake import export_lake, ingest_into_lake

    db = tmp_path / "a.duckdb"
    ingest_paths(db, [logs["a"]], progress=False)
    export_lake(db, lake)
    monkeypatch.setenv("TRAJSCOPE_DB", str(tmp_path / "not-read.duckdb"))  # the lake's catalog replaces it
    monkeypatch.setenv("TRAJSCOPE_APP_LAKE", str(lake))
    at = AppTest.from_file(str(ROOT / "app" / "main.py"), default_timeout=120).run()
    for runs, trajectories in (("2", "60"), ("4", "110")):
        assert not at.exception, [e.message for e in at.exception]
        metrics = {m.label: m.value for m in at.metric}
        assert (metrics["Runs"], metrics["Trajectories"]) == (runs, trajectories)
        if runs == "2":
            ingest_into_lake(lake, [logs["b"]], progress=False)
            at.run()
    assert not (tmp_path / "not-read.duckdb").exists()
