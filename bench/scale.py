"""Scale benchmark: ingest, warehouse size and every page's queries at growing N, ratios measured in one run.

    .venv/bin/python bench/scale.py [--sizes 10000,100000,1000000] [--workdir DIR] [--keep-logs] [--load-floor] [--tiny]
    .venv/bin/python bench/scale.py --lake-of WAREHOUSE [--workdir DIR]

For each N (synthetic paired runs from bench/synthetic.py, ~9 steps per trajectory) it measures, each
in a fresh process: trajscope ingest (seconds, peak RSS, warehouse bytes), DuckDB's own `read_json` of
the same file, every dashboard page's queries cold (the first run in a new process) and warm (best of
three), and the `compare` and `report` commands end to end. Then it prints the ratios: ingest over
read_json per N, and how each figure grew against N between successive sizes (1.00 = linear).
--load-floor also times the load's DuckDB statements alone (the log pre-split into the ingest's batches, no
validation pass), so the ratio splits into what the Python pass and what DuckDB's own statements cost.
--lake-of exports a warehouse to a lake (warehouse.lake) and times every page over the lake against
the same pages over the file, in one run: Parquet bytes per trajectory and the lake / file ratio per page;
then a writer of 2,000 new trajectories, and the new snapshot's catalog extended from the earlier one
against the same built whole, every derived row compared.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.synthetic import write_synthetic_log  # noqa: E402

TINY_SIZES = (200, 400)
INGEST_TARGET = 2.0  # ingest within 2x DuckDB's own read_json of the same file
WARM_TARGET_S, COLD_TARGET_S, COMMAND_TARGET_S = 1.0, 2.0, 5.0

_INGEST = r"""
import json, sys, time
from bench.process_memory import peak_rss_mb
log, db = sys.argv[1:3]
from trajscope.warehouse import ingest_paths
t0 = time.perf_counter()
report = ingest_paths(db, [log], progress=False)
print(json.dumps({"seconds": time.perf_counter() - t0, "new": report.new,
                  "peak_rss_mb": peak_rss_mb()}))
"""

_READ_JSON = r"""
import json, sys, time
from bench.process_memory import peak_rss_mb
import duckdb
log, db = sys.argv[1:3]
t0 = time.perf_counter()
con = duckdb.connect(db)
con.execute("CREATE TABLE flat AS SELECT * FROM read_json(?, format='newline_delimited')", [log])
rows = con.execute("SELECT count(*) FROM flat").fetchone()[0]
con.close()
print(json.dumps({"seconds": time.perf_counter() - t0, "rows": rows,
                  "peak_rss_mb": peak_rss_mb()}))
"""

# The load's DuckDB statements alone: the log cut into the ingest's batch files (its batch size) beforehand, then
# the ingest's own _load_batch and commits into a new file, with no validation at all. An experiment on the
# loader's internals, not a mode of trajscope: what the ingest would cost if its Python pass were free.
_LOAD_FLOOR = r"""
import itertools, json, os, sys, time
from pathlib import Path
import msgspec
import trajscope.warehouse._loader as loader
from trajscope.warehouse._connection import open_warehouse
log, db, workdir = sys.argv[1:4]

class _Id(msgspec.Struct):
    trajectory_id: str

decode = msgspec.json.Decoder(_Id).decode
batches, lines, ids, size = [], [], [], 0
with open(log, "rb") as fh:
    for line in itertools.chain(fh, [None]):
        if line is not None:
            lines.append(line); ids.append(decode(line).trajectory_id); size += len(line)
        if lines and (line is None or size >= loader._BATCH_BYTES):
            path = Path(workdir) / f"batch-{len(batches):05d}.jsonl"
            path.write_bytes(b"".join(lines))
            batches.append((path, ids)); lines, ids, size = [], [], 0
t0 = time.perf_counter()
with open_warehouse(db, new_file=True) as con:
    con.execute("BEGIN TRANSACTION")
    con.execute(loader._named_sql("ingest_ids.sql"))
    for seq, (path, batch_ids) in enumerate(batches):
        batch = loader._Batch(path=path, ids=batch_ids, hashes=batch_ids, line_ids=batch_ids)
        loader._load_batch(con, batch, Path(log), seq, False)
        path.unlink()
        con.execute("COMMIT"); con.execute("BEGIN TRANSACTION")
    con.execute("DROP TABLE ingest_ids"); con.execute("COMMIT"); con.execute("CHECKPOINT")
    seconds = time.perf_counter() - t0
    loaded = con.execute("SELECT count(*) FROM trajectories").fetchone()[0]
print(json.dumps({"seconds": seconds, "batches": len(batches), "trajectories": loaded}))
"""

# Every page's queries in a new process: the first call is cold (nothing cached), the best of three warm.
_PAGES = r"""
import json, sys, time
sys.path.insert(0, sys.argv[2])
from bench.app_pages import _pages
def timed(fn):
    t = time.perf_counter(); fn(); return time.perf_counter() - t
out = {}
for name, fn in _pages(sys.argv[1]).items():
    try:
        cold = timed(fn)
        out[name] = {"cold": cold, "warm": min(timed(fn) for _ in range(3))}
    except Exception as exc:  # a page that fails at this size is a finding, printed as such
        out[name] = {"cold": float("nan"), "warm": float("nan"), "error": str(exc).splitlines()[0][:200]}
print(json.dumps(out))
"""


def _child(code: str, *args: str) -> dict:
    done = subprocess.run([sys.executable, "-c", code, *args], cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"child failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _command(*args: str) -> float:
    """Seconds for one trajscope command end to end, as a user runs it (interpreter start and imports included)."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "trajscope", *args], cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:  # a command that fails at this size is a finding: printed, timed as nan
        print(f"FAILED: trajscope {args[0]}: {(done.stderr.strip().splitlines() or ['?'])[-1]}", flush=True)
        return float("nan")
    return time.perf_counter() - start


def measure_queries(db: Path, row: dict) -> dict:
    """Every page (cold and warm), compare and report on a built warehouse."""
    row["pages"] = _child(_PAGES, str(db), str(ROOT))
    print(json.dumps({"n": row.get("n"), "pages": row["pages"]}), flush=True)
    runs = ("synthetic-baseline", "synthetic-read_gate")
    row["compare_s"] = _command("compare", *runs, "--db", str(db))
    report = ("report", "read-gate", "--runs", ",".join(runs), "--db", str(db), "--format", "markdown")
    # The first report of a warehouse version hashes the file for its footnote; the next one reads the digest
    # kept in $TRAJSCOPE_CACHE (analysis.report.file_digest), so both are timed.
    row["report_s"] = _command(*report)
    row["report_again_s"] = _command(*report)
    print(f"compare {row['compare_s']:.2f} s, report {row['report_s']:.2f} s (again, digest kept: "
          f"{row['report_again_s']:.2f} s)", flush=True)
    return row


def load_floor(log: Path, work: Path, row: dict) -> None:
    """The load's DuckDB statements alone on the same log (no validation pass), against read_json."""
    db, batches = work / f"floor-{row['n']}.duckdb", work / f"floor-batches-{row['n']}"
    shutil.rmtree(batches, ignore_errors=True)
    batches.mkdir()
    try:
        floor = _child(_LOAD_FLOOR, str(log), str(db), str(batches))
    finally:
        shutil.rmtree(batches, ignore_errors=True)
        db.unlink(missing_ok=True)
    assert floor["trajectories"] == row["n"], f"the load alone loaded {floor['trajectories']} of {row['n']}"
    row["load_floor_s"] = floor["seconds"]
    print(f"N={row['n']:,}: the load alone (no validation, {floor['batches']} batches) {floor['seconds']:.1f} s, "
          f"ratio load alone / read_json = {floor['seconds'] / row['read_json_s']:.2f}", flush=True)


def measure(n: int, work: Path, keep_log: bool, floor: bool = False) -> dict:
    """Every figure for one N; the log is removed afterwards unless keep_log (1M trajectories is ~10 GB)."""
    log, db, flat = work / f"synthetic-{n}.jsonl", work / f"wh-{n}.duckdb", work / f"flat-{n}.duckdb"
    for path in (db, flat, db.with_name(db.name + ".wal")):
        path.unlink(missing_ok=True)
    t = time.perf_counter()
    reused = keep_log and log.is_file()  # a kept log of the same seed: the generator would write it byte for byte
    steps = None if reused else write_synthetic_log(log, n, seed=7)
    row: dict = {"n": n, "steps": steps, "log_bytes": log.stat().st_size, "generate_s": time.perf_counter() - t}
    if not reused:
        print(f"N={n:,}: generated {steps:,} steps ({row['log_bytes'] / 1e6:,.0f} MB) in {row['generate_s']:.1f} s",
              flush=True)
    ingest = _child(_INGEST, str(log), str(db))
    assert ingest["new"] == n, f"ingest added {ingest['new']} of {n} trajectories"
    if reused:
        row["steps"] = _child(_STEPS, str(db))["n"]
        print(f"N={n:,}: reused the kept log ({row['steps']:,} steps, {row['log_bytes'] / 1e6:,.0f} MB)", flush=True)
    row.update(ingest_s=ingest["seconds"], ingest_rss_mb=ingest["peak_rss_mb"], db_bytes=db.stat().st_size)
    flat_load = _child(_READ_JSON, str(log), str(flat))
    # The baseline counts only if it read every record.
    assert flat_load["rows"] == n, f"read_json read {flat_load['rows']} of {n} records"
    row.update(read_json_s=flat_load["seconds"], read_json_rss_mb=flat_load["peak_rss_mb"])
    flat.unlink()
    if floor:
        load_floor(log, work, row)
    if not keep_log:
        log.unlink()
    print(f"N={n:,}: ingest {row['ingest_s']:.1f} s, read_json {row['read_json_s']:.1f} s", flush=True)
    return measure_queries(db, row)


_EXPORT = r"""
import json, sys, time
from bench.process_memory import peak_rss_mb
from trajscope.warehouse.lake import export_lake
t0 = time.perf_counter()
result = export_lake(sys.argv[1], sys.argv[2])
print(json.dumps({"seconds": time.perf_counter() - t0, "trajectories": result.rows.get("trajectories", 0),
                  "peak_rss_mb": peak_rss_mb()}))
"""

_CATALOG = r"""
import json, sys, time
from trajscope.warehouse.lake import lake_catalog
t0 = time.perf_counter()
catalog = str(lake_catalog(sys.argv[1]))
print(json.dumps({"catalog": catalog, "seconds": time.perf_counter() - t0}))
"""


# A writer of new runs into the lake, then the snapshot's catalog extended from the one before and built whole
# (a fresh cache), and every derived row and question of the two compared.
_EXTEND = r"""
import json, os, sys, time
from trajscope.warehouse.lake import _catalog, ingest_into_lake, lake_catalog
from trajscope.warehouse._derived import DERIVED
import duckdb
lake, log, whole_cache = sys.argv[1:4]
recomputed = []  # a whole recompute of a derived table: the extended build must do none
real = _catalog.recompute_facts
_catalog.recompute_facts = lambda con, d: (recomputed.append(d.table), real(con, d))
t0 = time.perf_counter()
ingest_into_lake(lake, [log], progress=False)
t1 = time.perf_counter()
extended = str(lake_catalog(lake))
t2 = time.perf_counter()
whole_recomputes_when_extending = len(recomputed)
os.environ["TRAJSCOPE_CACHE"] = whole_cache
whole = str(lake_catalog(lake))
t3 = time.perf_counter()
con = duckdb.connect(extended, read_only=True)
con.execute("ATTACH ? AS whole (READ_ONLY)", [whole])
differing = {}
for table in [d.table for d in DERIVED] + ["questions"]:
    differing[table] = sum(con.execute(f"SELECT count(*) FROM (SELECT * FROM {a}.{table} EXCEPT ALL "
                                       f"SELECT * FROM {b}.{table})").fetchone()[0]
                           for a, b in (("main", "whole.main"), ("whole.main", "main")))
print(json.dumps({"write_s": t1 - t0, "extended_s": t2 - t1, "whole_s": t3 - t2, "differing": differing,
                  "extended": whole_recomputes_when_extending == 0}))
"""

_COUNT = r"""
import json, sys
from trajscope.warehouse import open_read
with open_read(sys.argv[1]) as reader:
    print(json.dumps({"n": reader.execute("SELECT count(*) FROM trajectories").fetchone()[0]}))
"""


_STEPS = _COUNT.replace("FROM trajectories", "FROM steps")


def _trajectories(db: Path) -> int:
    return _child(_COUNT, str(db))["n"]


def _bytes_under(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*.parquet"))


def lake_versus_file(db: Path, work: Path) -> None:
    """Export db to a lake, then every page over the lake and over the file, alternated in one run."""
    lake = work / f"lake-{db.stem}"
    shutil.rmtree(lake, ignore_errors=True)
    export = _child(_EXPORT, str(db), str(lake))
    n = export["trajectories"]
    size = _bytes_under(lake)
    files = sum(1 for _ in lake.rglob("part_*.parquet"))
    print(f"exported {n:,} trajectories in {export['seconds']:.1f} s (peak RSS {export['peak_rss_mb']:,.0f} MB): "
          f"{size / 1e6:,.1f} MB of Parquet in {files:,} files, {size / max(n, 1):,.0f} B/trajectory; "
          f"the file is {db.stat().st_size / 1e6:,.1f} MB, {db.stat().st_size / max(n, 1):,.0f} B/trajectory")
    built = _child(_CATALOG, str(lake))
    catalog = built["catalog"]
    print(f"catalog of the lake's snapshot built in {built['seconds']:.1f} s (its derived tables computed once), "
          f"{Path(catalog).stat().st_size / 1e6:,.1f} MB")
    over_file = _child(_PAGES, str(db), str(ROOT))
    over_lake = _child(_PAGES, catalog, str(ROOT))
    print(f"\n{'page (warm s)':40s} {'file':>8s} {'lake':>8s} {'lake/file':>9s}   (cold: file / lake)")
    for page, t in over_file.items():
        lk = over_lake[page]
        print(f"{page:40s} {t['warm']:8.3f} {lk['warm']:8.3f} {lk['warm'] / t['warm']:9.2f}   "
              f"({t['cold']:.3f} / {lk['cold']:.3f})")
    worst = max(over_lake.values(), key=lambda v: v["warm"])["warm"]
    print(f"ratio slowest page lake / file (warm) = {worst / max(v['warm'] for v in over_file.values()):.2f}")
    extend_lake(lake, n, work)


def extend_lake(lake: Path, n: int, work: Path) -> None:
    """A writer of new runs (2,000 trajectories, or a tenth of a small lake), then its snapshot's catalog extended
    from the one before against the same built whole, with every derived row compared."""
    added = 2000 if n >= 20_000 else max(40, n // 10)
    log = work / f"lake-extra-{added}.jsonl"
    write_synthetic_log(log, added, seed=7, run_prefix="extra")  # seed 7: the same questions as bench's logs
    whole_cache = work / "catalog-whole-cache"
    shutil.rmtree(whole_cache, ignore_errors=True)
    grown = _child(_EXTEND, str(lake), str(log), str(whole_cache))
    log.unlink()
    shutil.rmtree(whole_cache, ignore_errors=True)
    same = not any(grown["differing"].values())
    how = "extended from the earlier snapshot's" if grown["extended"] else "NOT extended (built whole)"
    print(f"a writer of {added:,} trajectories: written in {grown['write_s']:.1f} s; the catalog {how} in "
          f"{grown['extended_s']:.2f} s, built whole in {grown['whole_s']:.2f} s "
          f"(ratio {grown['extended_s'] / grown['whole_s']:.2f}); every derived row and question equal: "
          f"{'yes' if same else 'NO ' + json.dumps(grown['differing'])}")


def _growth(small: float, large: float, n_small: int, n_large: int) -> str:
    """How a figure grew against N: log(ratio of figures) / log(ratio of sizes); 1.00 is linear, 0 constant."""
    if small <= 0 or large <= 0:
        return "  n/a"
    return f"{math.log(large / small) / math.log(n_large / n_small):5.2f}"


def report(rows: list[dict]) -> None:
    print(f"\nload average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
    print(f"\n{'N':>10s} {'steps':>11s} {'ingest s':>9s} {'traj/s':>8s} {'read_json s':>11s} "
          f"{'ratio':>6s} {'peak RSS MB':>11s} {'warehouse MB':>12s} {'B/traj':>7s} {'compare s':>9s} {'report s':>8s}")
    for r in rows:
        ratio = r["ingest_s"] / r["read_json_s"]
        print(f"{r['n']:>10,} {r['steps']:>11,} {r['ingest_s']:>9.2f} {r['n'] / r['ingest_s']:>8,.0f} "
              f"{r['read_json_s']:>11.2f} {ratio:>6.2f} {r['ingest_rss_mb']:>11,.0f} {r['db_bytes'] / 1e6:>12,.1f} "
              f"{r['db_bytes'] / r['n']:>7,.0f} {r['compare_s']:>9.2f} {r['report_s']:>8.2f}")
    for r in rows:
        print(f"ratio ingest / read_json at N={r['n']:,} = {r['ingest_s'] / r['read_json_s']:.2f}  "
              f"(target <= {INGEST_TARGET:g})")
    pages = list(rows[0]["pages"])
    print(f"\n{'page (cold / warm s)':40s}" + "".join(f"{r['n']:>18,}" for r in rows))
    for page in pages:
        cells = "".join(f"{r['pages'][page]['cold']:>9.3f}{r['pages'][page]['warm']:>9.3f}" for r in rows)
        print(f"{page:40s}{cells}")
    for r in rows:
        for page, t in r["pages"].items():
            if "error" in t:
                print(f"FAILED at N={r['n']:,}: {page}: {t['error']}")
    last = rows[-1]
    worst_warm = max(v["warm"] for v in last["pages"].values() if "error" not in v)
    worst_cold = max(v["cold"] for v in last["pages"].values() if "error" not in v)
    failed = sum("error" in v for v in last["pages"].values())
    print(f"\nat N={last['n']:,}: slowest page {worst_cold:.3f} s cold (target < {COLD_TARGET_S:g}), "
          f"{worst_warm:.3f} s warm (target < {WARM_TARGET_S:g}), {failed} page(s) failed; "
          f"compare {last['compare_s']:.2f} s, "
          f"report {last['report_s']:.2f} s (target < {COMMAND_TARGET_S:g})")
    if len(rows) < 2:
        return
    print("\ngrowth against N between successive sizes (1.00 = linear, 0.00 = constant):")
    spans = [f"{a['n']:,}->{b['n']:,}" for a, b in zip(rows, rows[1:], strict=False)]
    print(f"{'measure':40s}" + "".join(f"{span:>20s}" for span in spans))
    measures = {"ingest s": "ingest_s", "read_json s": "read_json_s", "peak RSS of the ingest": "ingest_rss_mb",
                "warehouse bytes": "db_bytes", "compare s": "compare_s", "report s": "report_s"}
    for label, key in measures.items():
        print(f"{label:40s}" + "".join(f"{_growth(a[key], b[key], a['n'], b['n']):>20s}"
                                      for a, b in zip(rows, rows[1:], strict=False)))
    for page in pages:
        print(f"{('page ' + page + ' (warm)')[:40]:40s}" + "".join(
            f"{_growth(a['pages'][page]['warm'], b['pages'][page]['warm'], a['n'], b['n']):>20s}"
            for a, b in zip(rows, rows[1:], strict=False)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated trajectory counts, smallest first")
    parser.add_argument("--workdir", default=None, help="where logs and warehouses go (default: a new temp dir)")
    parser.add_argument("--keep-logs", action="store_true",
                        help="keep each generated log (1M is ~10 GB), and use a log kept in --workdir before")
    parser.add_argument("--json", type=Path, default=None, help="also write every figure to this JSON file")
    parser.add_argument("--queries-of", type=Path, nargs="+", default=None, metavar="WAREHOUSE",
                        help="instead of the curve: pages, compare and report on these built synthetic warehouses")
    parser.add_argument("--lake-of", type=Path, default=None,
                        help="instead of the curve: export this warehouse to a lake and time the pages over both")
    parser.add_argument("--load-floor", action="store_true",
                        help="also time the load's DuckDB statements alone on each log (no validation pass): what "
                             "the ingest would cost if its Python pass were free, against read_json")
    parser.add_argument("--tiny", action="store_true",
                        help=f"sizes {TINY_SIZES}: checks the script runs end to end, not speed")
    args = parser.parse_args()
    sizes = list(TINY_SIZES) if args.tiny else sorted(int(s.replace("_", "")) for s in args.sizes.split(","))
    work = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="trajscope-bench-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    if args.lake_of:
        lake_versus_file(args.lake_of, work)
        return
    if args.queries_of:
        for db in args.queries_of:
            row = measure_queries(db, {"n": _trajectories(db), "db_bytes": db.stat().st_size})
            print(json.dumps(row))
            if args.json:
                with open(args.json, "a") as out:
                    out.write(json.dumps(row) + "\n")
        return
    rows = [measure(n, work, args.keep_logs, floor=args.load_floor or args.tiny) for n in sizes]
    report(rows)
    if args.tiny:  # the lake path end to end on the largest tiny warehouse
        lake_versus_file(work / f"wh-{sizes[-1]}.duckdb", work)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    if not args.workdir:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
