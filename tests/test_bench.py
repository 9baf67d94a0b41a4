"""Every bench script runs from a checkout in its tiny mode, and no bench script shadows a package.

Run as `make bench` runs them (python bench/NAME.py from the repo root), so sys.path[0] is bench/:
a script named like a package (bench/engine.py) would shadow it for every other bench script.
The figures of a tiny run mean nothing; only that the script completes and prints its ratio lines.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
TOP_PACKAGES = ("trajscope", "app", "engine", "warehouse", "ingest", "bench")
HELPERS = {"__init__", "mock_process", "process_memory", "synthetic",  # imported by the scripts, not run
           "peers_inspect", "peers_measure", "peers_phoenix", "peers_phoenix_worker"}
SHARED_DATA = ROOT.parent / "shared" / "data"

# script -> (extra arguments, lines its output must contain)
TINY_RUNS: dict[str, tuple[list[str], list[str]]] = {
    "ingest_vs_read_json": ([], [r"^ratio ingest / read_json = \d+\.\d\d", r"^trajscope ingest .* traj/s",
                                 r"^re-ingest \(no change\) .*adds 0 trajectories"]),
    "engine_throughput": ([], [r"^ conc episodes .* ratio ", r"^\s+1\s+\d+\s.*\d+\.\d\d", r"^\s+4\s+\d+\s.*\d+\.\d\d"]),
    "stats_comparison": ([], [r"^full paired comparison, n=2,000 .*x of budget$",
                              r"^continuous \(F1\) paired bootstrap"]),
    # --funnel-before: the funnel pages again on a copy with two older views (files applied in order).
    "app_pages": (["--funnel-before", "tests/fixtures/funnel/evidence_funnel_question_grouped.sql",
                   "tests/fixtures/funnel/first_decisive_error_before.sql"],
                  [r"^warehouse: 300 trajectories in 4 runs", r"^Compare\s+\d+\.\d+\s+\d+\.\d+",
                   r"^slowest page \(warm\): \d+\.\d+ s",
                   r"^funnel page \(evidence_funnel_question_grouped",
                   r"^Evidence funnel\s+\d+\.\d{3}\s+\d+\.\d{3}\s+\d+\.\d{3}\s+\d+\.\d{3}$"]),
    "report": ([], [r"^warehouse: 2,000 trajectories in 4 runs", r"^  read-gate\s+\d+\.\d\d s",
                    r"^all three reports over 2,000 trajectories: \d+\.\d\d s median"]),
    "retrieval_2wiki": ([], [r"^recall@5 RRF hybrid", r"^rank-bm25 / bm25s median time\s+\d+x",
                             r"^warm hybrid search p50\s+\d+\.\d+ ms"]),
    "retrieval_load": ([], [r"^idle\s+1\s+default\s+2\s", r"^loaded\s+32\s+chosen\s+\d+\s",
                            r"^loaded, concurrency 1, chosen threads: p50 \d+\.\d\d ms"]),
    "peers": ([], [r"^accuracy by epoch  trajscope: ",
                   r"^ratio samples_df / \(trajscope ingest \+ query\) at 50 samples = \d",
                   r"^ratio read_eval_log / \(trajscope ingest \+ query\) at 50 samples = \d",
                   r"^trajscope ingest\s+\d+\.\d\d\s+\d+$",  # seconds, then peak MB
                   # Phoenix needs .venv-peers (make bench-peers), which the test set-up does not build
                   r"^(ratio Phoenix \(start \+ load \+ span dataframe\) / \(trajscope ingest \+ query\) at 20 traces"
                   r" = \d|Phoenix half not run: no .*\.venv-peers/bin/python)"]),
    "scan": ([], [r"^scan of 40 trajectories, mock latency 0.05 s", r"^\s+4\s+\d+\.\d\d\s.*\d+\.\d\d\s+\(",
                  r"^\s+8\s+\d+\.\d\d\s"]),
    "scale": ([], [r"^ratio ingest / read_json at N=200 = \d+\.\d\d", r"^ratio ingest / read_json at N=400 = ",
                   r"^N=400: the load alone \(no validation, 1 batches\) \d+\.\d s, ratio load alone / read_json = "
                   r"\d+\.\d\d",
                   r"^at N=400: slowest page \d+\.\d+ s cold", r"^ingest s\s+-?\d+\.\d\d$",
                   r"^page Evidence funnel \(warm\)\s+-?\d+\.\d\d$", r"^exported 400 trajectories in ",
                   r"^page \(warm s\)\s+file\s+lake\s+lake/file", r"^ratio slowest page lake / file \(warm\) = \d",
                   r"^a writer of 40 trajectories: .* the catalog extended from the earlier snapshot's in "
                   r"\d+\.\d\d s, built whole in .* every derived row and question equal: yes$"]),
    "attribute_whowhen": ([], [r"^2 logs, model smollm2-135m-instruct, budget 1000",
                               r"^all-at-once: \d+ s wall", r"^\| method \|"]),
    "ray_matrix": ([], [r"^ratio ray / local wall time = \d+\.\d\d", r"^same trajectories .*: yes \(8 rows\)"]),
    "models": ([], [r"^\| model \| dataset \| questions \| valid actions", r"^\| smollm2-135m-instruct \| demo \| 1 \|",
                    r"^\| smollm2-135m-instruct \| hotpotqa_distractor_dev_100 \| 1 \|"]),
}


def _scripts() -> list[str]:
    return sorted(p.stem for p in BENCH.glob("*.py") if p.stem not in HELPERS)


def _run(name: str, args: list[str], tmp_path: Path) -> str:
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    env = {**os.environ, "PYTHONPATH": path, "TRAJSCOPE_CACHE": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, f"bench/{name}.py", "--tiny", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"bench/{name}.py --tiny exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def test_no_bench_script_is_named_like_an_importable_package():
    for name in _scripts() + sorted(HELPERS - {"__init__"}):
        assert name not in TOP_PACKAGES, f"bench/{name}.py shadows the {name} package when a bench script runs"
        assert not _importable_in_a_fresh_interpreter(name), f"bench/{name}.py shadows the installed module {name}"


def _importable_in_a_fresh_interpreter(name: str) -> bool:
    # Asked in a new process: other tests extend sys.path (onnxruntime's tools make `models` importable).
    probe = f"import importlib.util, sys; sys.exit(0 if importlib.util.find_spec({name!r}) else 1)"
    return subprocess.run([sys.executable, "-c", probe], cwd=tempfile.gettempdir()).returncode == 0


def test_every_bench_script_has_a_tiny_run_here():
    assert sorted(TINY_RUNS) == _scripts(), "add the new bench script to TINY_RUNS (with a --tiny mode)"


def _check(name: str, tmp_path: Path) -> None:
    args, expected = TINY_RUNS[name]
    if name in ("ingest_vs_read_json", "scale", "peers"):
        args = [*args, "--workdir", str(tmp_path / "work")]
    if name == "app_pages":
        args = [*args, "--db", str(tmp_path / "bench.duckdb")]
    out = _run(name, args, tmp_path)
    for pattern in expected:
        assert re.search(pattern, out, re.MULTILINE), f"bench/{name}.py --tiny printed no line like {pattern!r}:\n{out}"


@pytest.mark.parametrize("name", ["engine_throughput", "stats_comparison"])
def test_bench_script_runs_in_tiny_mode(name, tmp_path):
    _check(name, tmp_path)


# Slow: each starts several Python processes (ingest) or imports Streamlit and ingests (app).
@pytest.mark.slow
@pytest.mark.parametrize("name", ["ingest_vs_read_json", "app_pages", "report", "scan", "scale", "ray_matrix", "peers"])
def test_bench_script_with_a_warehouse_runs_in_tiny_mode(name, tmp_path):
    _check(name, tmp_path)


@pytest.mark.slow
@pytest.mark.skipif(not SHARED_DATA.is_dir(), reason="real data shared/data is not beside this checkout")
def test_retrieval_bench_runs_in_tiny_mode(tmp_path):
    # Slow: even a 300-passage corpus loads the embedding model and exports the ONNX query encoder.
    _check("retrieval_2wiki", tmp_path)


@pytest.mark.slow
@pytest.mark.skipif(not SHARED_DATA.is_dir(), reason="real data shared/data is not beside this checkout")
def test_retrieval_load_bench_runs_in_tiny_mode(tmp_path):
    # Slow: the same corpus and ONNX export, then every concurrency twice, idle and beside two busy processes.
    _check("retrieval_load", tmp_path)


@pytest.mark.slow
@pytest.mark.skipif(not SHARED_DATA.is_dir(), reason="real data shared/data is not beside this checkout")
def test_model_bench_runs_in_tiny_mode(tmp_path):
    # Slow: it starts the embedded model server and makes real model calls on demo and HotpotQA.
    _check("models", tmp_path)


@pytest.mark.slow
def test_attribution_bench_runs_in_tiny_mode(tmp_path):
    # Slow: the embedded model attributes two real Who&When logs (../shared/data).
    _check("attribute_whowhen", tmp_path)
