"""Ingest benchmark: 100k synthetic trajectories (~1M steps) vs DuckDB's own read_json bulk load."""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.synthetic import write_synthetic_log  # noqa: E402

TINY_N = 500

_CHILD = r"""
import json, sys, time
from bench.process_memory import peak_rss_mb
mode, log, db = sys.argv[1:4]
t0 = time.perf_counter()
if mode == "trajscope":
    from trajscope.warehouse import ingest_paths
    report = ingest_paths(db, [log], progress=False)
    extra = {"new": report.new}
elif mode == "rejson":
    import duckdb
    con = duckdb.connect(db)
    con.execute("CREATE TABLE flat AS SELECT * FROM read_json(?, format='newline_delimited')", [log])
    extra = {"rows": con.execute("SELECT count(*) FROM flat").fetchone()[0]}
    con.close()
elif mode == "query":
    import duckdb
    from trajscope.warehouse import open_read
    times = {}
    with open_read(db) as con:
        for view in ("run_summary", "trajectory_facts", "trajectory_evidence"):
            q = f"SELECT * FROM {view}" if view == "run_summary" else f"SELECT count(*), avg(1) FROM {view}"
            t = time.perf_counter(); con.execute(q).fetchall(); times[view] = time.perf_counter() - t
    extra = {"query_s": times}
seconds = time.perf_counter() - t0
print(json.dumps({"seconds": seconds, "peak_rss_mb": peak_rss_mb(), **extra}))
"""


def _child(mode: str, log: Path, db: Path) -> dict:
    out = subprocess.run([sys.executable, "-c", _CHILD, mode, str(log), str(db)], cwd=ROOT,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=100_000, help="trajectories to generate")
    parser.add_argument("--workdir", default=None)
    parser.add_argument("--tiny", action="store_true", help=f"{TINY_N} trajectories: checks the script runs, not speed")
    args = parser.parse_args()
    if args.tiny:
        args.n = TINY_N
    work = Path(args.workdir or tempfile.mkdtemp(prefix="trajscope-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    log = work / "synthetic.jsonl"
    t = time.perf_counter()
    n_steps = write_synthetic_log(log, args.n, seed=7)
    print(f"generated {args.n:,} trajectories / {n_steps:,} steps "
          f"({log.stat().st_size / 1e6:.0f} MB) in {time.perf_counter() - t:.1f}s")
    for p in (work / "wh.duckdb", work / "flat.duckdb"):
        p.unlink(missing_ok=True)
    ours = _child("trajscope", log, work / "wh.duckdb")
    again = _child("trajscope", log, work / "wh.duckdb")
    flat = _child("rejson", log, work / "flat.duckdb")
    query = _child("query", log, work / "wh.duckdb")
    assert ours["new"] == args.n and flat["rows"] == args.n, "each side must load every record"
    ratio = ours["seconds"] / flat["seconds"]
    print(f"trajscope ingest      {ours['seconds']:7.2f} s  {args.n / ours['seconds']:9,.0f} traj/s  "
          f"peak RSS {ours['peak_rss_mb']:,.0f} MB")
    print(f"re-ingest (no change) {again['seconds']:7.2f} s  (adds {again['new']} trajectories)")
    print(f"duckdb read_json flat {flat['seconds']:7.2f} s  peak RSS {flat['peak_rss_mb']:,.0f} MB")
    print(f"ratio ingest / read_json = {ratio:.2f}  (target <= 3)")
    print(f"peak memory {ours['peak_rss_mb']:,.0f} MB  (target < 2048 MB)")
    for view, s in query["query_s"].items():
        print(f"query {view:22s} {s * 1000:7.1f} ms  (target run_summary < 500 ms)")


if __name__ == "__main__":
    main()
