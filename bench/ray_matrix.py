"""Ray benchmark: one matrix's wall time in one process against `--ray` on a two-node local cluster, in one run.

    .venv/bin/python bench/ray_matrix.py [--n 60] [--latency 0.2] [--concurrency 4] [--shards 2] [--tiny]

A mock endpoint in its own process answers every call after a fixed latency (3 calls per episode:
search, search, final) for the real Read-Gate controller over the demo set with BM25. The matrix has two
runs (baseline, read_gate). Both the local run and the Ray driver start as fresh `trajscope run`
processes, into warehouses of their own, and the two warehouses' trajectories are compared. The
cluster (a head and one worker node, one CPU each) starts before the Ray figure and is timed apart.
On one machine the gain is what more episodes in flight give against a latency-bound endpoint; across
machines each node brings its own endpoint too.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.mock_process import start_mock  # noqa: E402

CALLS_PER_EPISODE = 3
_TRAJECTORIES = "SELECT trajectory_id, final_answer, n_steps, end_reason FROM trajectories ORDER BY ALL"


def timed_run(args: list[str], env: dict[str, str]) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "trajscope", "run", *args, "--no-progress"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=1800)
    if done.returncode != 0:
        raise SystemExit(f"trajscope run {' '.join(args)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    return time.perf_counter() - started, done.stdout


def rows(db: Path) -> list[tuple]:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(_TRAJECTORIES).fetchall()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=60, help="questions per run (the demo has 60)")
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per model call")
    parser.add_argument("--concurrency", type=int, default=4, help="episodes in flight per run (local) / shard (Ray)")
    parser.add_argument("--shards", type=int, default=2, help="shards per run on Ray")
    parser.add_argument("--tiny", action="store_true", help="4 questions, 0.05 s latency (a smoke run)")
    args = parser.parse_args()
    if args.tiny:
        args.n, args.latency = 4, 0.05

    from ray.cluster_utils import Cluster

    load_before = os.getloadavg()
    mock, base_url = start_mock(args.latency, CALLS_PER_EPISODE)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}
    os.environ["PYTHONPATH"] = env["PYTHONPATH"]  # the cluster's nodes (started from here) import this checkout
    cluster = None
    try:
        with tempfile.TemporaryDirectory(prefix="bench-ray-") as tmp:
            work = Path(tmp)
            matrix = work / "matrix.yaml"
            matrix.write_text(json.dumps({
                "dataset": "demo", "n": args.n, "seed": 0, "model": f"mock:{base_url}", "retriever": "bm25",
                "cache": False, "concurrency": args.concurrency,
                "runs": [{"controller": "read_gate", "condition": "baseline"},
                         {"controller": "read_gate", "condition": "read_gate"}],
            }))
            local_s, _ = timed_run(["--matrix", str(matrix), "--db", str(work / "local.duckdb"),
                                    "--out", str(work / "local")], env)

            started = time.perf_counter()
            small = {"num_cpus": 1, "object_store_memory": 80 * 1024**2}
            cluster = Cluster(initialize_head=True, head_node_args={**small, "include_dashboard": False})
            cluster.add_node(**small)
            cluster.wait_for_nodes()
            cluster_s = time.perf_counter() - started
            ray_s, out = timed_run(["--matrix", str(matrix), "--ray", cluster.address, "--shards", str(args.shards),
                                    "--db", str(work / "ray.duckdb"), "--out", str(work / "shared")], env)
            local_rows, ray_rows = rows(work / "local.duckdb"), rows(work / "ray.duckdb")
    finally:
        if cluster is not None:
            cluster.shutdown()
        mock.terminate()
        mock.wait()
    load_after = os.getloadavg()

    episodes = 2 * args.n
    print(f"matrix: 2 runs x {args.n} questions, {CALLS_PER_EPISODE} calls per episode at {args.latency:.2f} s, "
          f"concurrency {args.concurrency}")
    print(f"load average before {load_before[0]:.2f}, after {load_after[0]:.2f} (1 min); {os.cpu_count()} CPUs")
    print(f"local, one process (runs one after another): {local_s:6.2f} s  {episodes / local_s:6.2f} traj/s")
    print(f"ray, 2 nodes x 1 CPU, {args.shards} shards per run:    {ray_s:6.2f} s  {episodes / ray_s:6.2f} traj/s")
    print(f"cluster start (head + 1 worker node, not in the ray figure): {cluster_s:.2f} s")
    print(f"ratio ray / local wall time = {ray_s / local_s:.2f}")
    same = local_rows == ray_rows and len(local_rows) == episodes
    print(f"same trajectories (ids, answers, steps, end reasons): {'yes' if same else 'NO'} ({len(ray_rows)} rows)")
    print("driver:", *out.strip().splitlines(), sep="\n  ")
    if not same:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
