"""Ingest benchmark: 100k synthetic trajectories (~1M steps) vs DuckDB's own read_json bulk load.

--one-parse (and --tiny) also asks whether DuckDB's typed read could stand in for the Python validation pass:
which records that the format rejects DuckDB's read with the format's columns still accepts, what each part of
the pass costs per line beside DuckDB's typed read of the same lines, and how the derived facts' refresh of one set
of trajectories grows with the rows the warehouse stores.
"""
from __future__ import annotations

import argparse
import copy
import itertools
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import duckdb
import msgspec
import pyarrow as pa

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.synthetic import write_synthetic_log  # noqa: E402
from trajscope.format import MAX_LINE_BYTES, RecordError, Trajectory, decode_trajectory, redaction_prefilter  # noqa: E402
from trajscope.warehouse._connection import open_warehouse  # noqa: E402
from trajscope.warehouse._derived import DERIVED, refresh_facts  # noqa: E402
from trajscope.warehouse._duckdb_types import read_json_columns  # noqa: E402
from trajscope.warehouse._loader import _line_hash, _redacted_lines  # noqa: E402

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


# Records the format rejects, each a change to a valid line: (what it is, change to the decoded record).
_REJECTED_RECORDS: tuple[tuple[str, Callable[[dict], None]], ...] = (
    ("unknown top-level field", lambda r: r.update(bogus=1)),
    ("unknown field in run", lambda r: r["run"].update(bogus=1)),
    ("unknown field in a step", lambda r: r["steps"][0].update(bogus=1)),
    ("field of another step kind", lambda r: r["steps"][0].update(passages=[])),
    ("missing required run.run_id", lambda r: r["run"].pop("run_id")),
    ("missing required question", lambda r: r.pop("question")),
    ("schema_version \"2\"", lambda r: r.update(schema_version="2")),
    ("unknown step kind", lambda r: r["steps"][0].update(kind="dance")),
    ("end_reason not in its literal set", lambda r: r.update(end_reason="bogus")),
    ("1.5 in an int field", lambda r: r["steps"][0].update(tokens_in=1.5)),
    ("\"7\" in an int field", lambda r: r["steps"][0].update(tokens_in="7")),
    ("5 in a string field", lambda r: r["steps"][0].update(query=5)),
    ("an object in a string field", lambda r: r["steps"][0].update(query={"a": 1})),
    ("1 in a bool field", lambda r: r["steps"][0].update(cached=1)),
    ("null for a required string", lambda r: r["question"].update(question_id=None)),
    ("null for a list", lambda r: r.update(judgments=None)),
    ("an object where steps' list is", lambda r: r.update(steps={"kind": "final"})),
    ("metadata nested 150 deep", lambda r: r.update(metadata={"a": json.loads("[" * 150 + "]" * 150)})),
)


def _typed_read(con, path: Path, columns: str) -> str:
    """'accepts' or 'rejects' for DuckDB's read of a log with the stage's explicit columns."""
    try:
        # Every column materialised, as the stage does: a count(*) alone would convert no field at all.
        con.execute(f"CREATE OR REPLACE TEMP TABLE probe AS SELECT * FROM read_json(?, format = 'newline_delimited', "
                    f"columns = {columns})", [str(path)])
    except duckdb.Error:
        return "rejects"
    return "accepts"


def probe_typed_read(log: Path, work: Path) -> None:
    """Which of _REJECTED_RECORDS DuckDB's typed read accepts (what Python validation alone catches today)."""
    columns = "{" + ", ".join(f"'{k}': '{v}'" for k, v in read_json_columns(Trajectory).items()) + "}"
    with open(log, "rb") as fh:
        valid = json.loads(fh.readline())
    con, one, accepted = duckdb.connect(), work / "one-record.jsonl", 0
    for what, change in _REJECTED_RECORDS:
        record = copy.deepcopy(valid)
        change(record)
        line = json.dumps(record).encode()
        try:
            decode_trajectory(line)
            raise AssertionError(f"the format accepts a record with {what}: the probe no longer tests a rejection")
        except RecordError as exc:
            field = exc.field
        one.write_bytes(line + b"\n")
        verdict = _typed_read(con, one, columns)
        accepted += verdict == "accepts"
        print(f"  {what:34s} format rejects ({field}); DuckDB typed read {verdict}")
    con.close()
    print(f"one parse: DuckDB's typed read accepts {accepted} of {len(_REJECTED_RECORDS)} records the format rejects")


def split_validation(log: Path, work: Path, max_lines: int) -> None:
    """Each part of the Python pass per line, and DuckDB's typed read of the same lines, in one process."""
    with open(log, "rb") as fh:
        lines = list(itertools.islice(fh, max_lines))
    batch = work / "one-batch.jsonl"
    batch.write_bytes(b"".join(lines))
    prefilter = redaction_prefilter()
    id_decode = msgspec.json.Decoder(_IdOnly).decode

    def read_redact_hash() -> None:
        with open(batch, "rb", buffering=1 << 20) as fh:
            for _, raw in _redacted_lines(fh, prefilter, batch, 1):
                _line_hash(raw)

    def ids_only() -> None:
        for raw in lines:
            id_decode(raw)

    def typed_decode() -> None:
        for n, raw in enumerate(lines, start=1):
            decode_trajectory(raw, path=batch, line=n)

    columns = "{" + ", ".join(f"'{k}': '{v}'" for k, v in read_json_columns(Trajectory).items()) + "}"
    con = duckdb.connect()
    con.execute("SET enable_progress_bar = false")

    def duckdb_read() -> None:
        con.execute(f"CREATE OR REPLACE TEMP TABLE stage AS SELECT * FROM read_json(?, format = 'newline_delimited', "
                    f"columns = {columns}, maximum_object_size = {2 * MAX_LINE_BYTES})", [str(batch)])

    parts = {"read + redaction scan + line hash": read_redact_hash, "trajectory_id only (msgspec)": ids_only,
             "full typed decode (msgspec)": typed_decode, "DuckDB typed read, as staged": duckdb_read}
    best = {}
    for name, part in parts.items():
        times = []
        for _ in range(2):
            t = time.perf_counter()
            part()
            times.append(time.perf_counter() - t)
        best[name] = min(times)
    con.close()
    batch.unlink()
    mb = sum(map(len, lines)) / 1e6
    print(f"validation pass split over {len(lines):,} lines ({mb:,.0f} MB), best of 2, one process:")
    for name, s in best.items():
        print(f"  {name:36s} {s:7.2f} s  {s / len(lines) * 1e6:7.1f} us/line")
    print(f"ratio full typed decode / DuckDB typed read = "
          f"{best['full typed decode (msgspec)'] / best['DuckDB typed read, as staged']:.2f}")


class _IdOnly(msgspec.Struct):
    trajectory_id: str


def _keep_only(db: Path, ids: list[str]) -> int:
    """Remove every other trajectory's rows from each table keyed by trajectory_id (rows rewritten, so no scan
    meets the removed ones); returns the trajectories left."""
    with open_warehouse(db) as con:
        con.register("kept_ids", pa.table({"trajectory_id": ids}))
        tables = [r[0] for r in con.execute(
            "SELECT c.table_name FROM duckdb_columns() c JOIN duckdb_tables() t USING (database_name, schema_name, "
            "table_name) WHERE c.column_name = 'trajectory_id' AND t.database_name = current_database()").fetchall()]
        for table in tables:
            con.execute(f"CREATE OR REPLACE TEMP TABLE kept AS SELECT * FROM {table} "
                        "WHERE trajectory_id IN (SELECT trajectory_id FROM kept_ids)")
            con.execute(f"DELETE FROM {table}")
            con.execute(f"INSERT INTO {table} SELECT * FROM kept")
        con.execute("DROP TABLE kept")
        con.execute("CHECKPOINT")
        return con.execute("SELECT count(*) FROM trajectories").fetchone()[0]


def _refresh_seconds(db: Path, ids: list[str]) -> dict[str, float]:
    """Seconds of each derived table's refresh for `ids`, each rolled back."""
    out = {}
    with open_warehouse(db) as con:
        con.register("refreshed_ids", pa.table({"trajectory_id": ids}))
        for derived in DERIVED:
            con.execute("BEGIN TRANSACTION")
            t = time.perf_counter()
            refresh_facts(con, derived, "SELECT trajectory_id FROM refreshed_ids")
            out[derived.table] = time.perf_counter() - t
            con.execute("ROLLBACK")
    return out


def refresh_against_stored(log: Path, db: Path, work: Path) -> None:
    """The derived refresh of the log's first quarter in the whole warehouse and in one holding that quarter only:
    how much of a batch's refresh grows with the rows earlier batches stored."""
    decode = msgspec.json.Decoder(_IdOnly).decode
    with open(log, "rb") as fh:
        n = sum(1 for _ in fh)
        fh.seek(0)
        ids = [decode(line).trajectory_id for line in itertools.islice(fh, max(1, n // 4))]
    quarter = work / "quarter.duckdb"
    shutil.copyfile(db, quarter)
    kept = _keep_only(quarter, ids)
    totals: dict[str, list[float]] = {"quarter": [], "whole": []}
    for _ in range(2):  # alternated, so both meet the same machine
        for name, path in (("quarter", quarter), ("whole", db)):
            totals[name].append(sum(_refresh_seconds(path, ids).values()))
    quarter.unlink()
    q, w = min(totals["quarter"]), min(totals["whole"])
    print(f"derived refresh of {len(ids):,} trajectories (best of 2): in a warehouse of {kept:,} {q:.2f} s, "
          f"of {n:,} {w:.2f} s; ratio whole / quarter = {w / q:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=100_000, help="trajectories to generate")
    parser.add_argument("--workdir", default=None)
    parser.add_argument("--one-parse", action="store_true",
                        help="also probe DuckDB's typed read as the validator and split the validation pass")
    parser.add_argument("--tiny", action="store_true", help=f"{TINY_N} trajectories: checks the script runs, not speed")
    parser.add_argument("--split-lines", type=int, default=25_000,
                        help="lines the validation split times (25k: one 256 MB ingest batch)")
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
    if args.one_parse or args.tiny:
        probe_typed_read(log, work)
        split_validation(log, work, max_lines=args.split_lines)
        refresh_against_stored(log, work / "wh.duckdb", work)


if __name__ == "__main__":
    main()
