"""The resource attacks cannot grow the server: user SQL runs in a query worker whose address space is
bounded, so the calling process's peak memory stays under a stated bound (measured in a subprocess)."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from security_limits import SMALL

from trajscope.warehouse.read._worker import address_space_bytes

# The stated bound for the process that serves the dashboard or runs the CLI, during these attacks
# (measured 200-280 MB alone; "525 MB inside the whole suite" was ru_maxrss carrying the suite's own peak; the issue's
# dashboard went from 302 MB to over 4 GB on the first attack alone).
SERVER_PEAK_MB = 1024

SCRIPT = textwrap.dedent("""
    import json, resource, sys
    from bench.process_memory import peak_rss_mb
    from trajscope.warehouse import ReadLimits, ReadRefused, run_read_query
    limits = ReadLimits(**json.loads(sys.argv[2]))
    outcomes = []
    for sql in json.loads(sys.argv[3]):
        try:
            result = run_read_query(sys.argv[1], sql, limits=limits)
            outcomes.append(["rows", result.df.height, result.n_bytes])
        except ReadRefused as exc:
            outcomes.append(["refused", type(exc).__name__, str(exc)])
    print(json.dumps({
        "self_mb": peak_rss_mb(),
        "children_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
        "outcomes": outcomes,
    }))
""")

ATTACKS = [
    # 4 x 100 kB per row: 302 MB of result, over 4 GB in an unbounded dashboard
    "SELECT repeat('a',100000) AS ca, repeat('b',100000) AS cb, repeat('c',100000) AS cc, "
    "repeat('d',100000) AS cd FROM range(20000)",
    "SELECT repeat('a', 1000000000) AS x",  # one 1 GB value, which DuckDB's memory limit does not count
    "SELECT list(i) FROM range(500000000) t(i)",
    "SELECT string_agg(repeat('a', 1000), ',') FROM range(5000000)",
    "SELECT DISTINCT (i * 7919)::VARCHAR || repeat('x', 60) AS s FROM range(30000000) t(i) ORDER BY s",
]


def test_the_calling_process_stays_under_its_bound_during_resource_attacks(warehouse_db):
    limits = {**SMALL.__dict__, "timeout_s": 20.0}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(warehouse_db), json.dumps(limits), json.dumps(ATTACKS)],
        capture_output=True, text=True, timeout=600, cwd=str(Path(__file__).parents[2]),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout.splitlines()[-1])
    for (kind, *detail), sql in zip(report["outcomes"], ATTACKS, strict=True):
        assert kind == "refused" or detail[1] <= SMALL.max_bytes, (sql, detail)
    assert report["self_mb"] < SERVER_PEAK_MB, report
    # Each worker is held to its address-space bound (resident memory is at most that).
    cap_mb = address_space_bytes(SMALL) / 2**20
    assert report["children_mb"] <= cap_mb, report
    print(json.dumps(report, indent=1))
