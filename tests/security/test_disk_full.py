"""An ingest that runs out of disk (here a file-size limit, RLIMIT_FSIZE, which fails writes the way a full
disk does) ends in one line naming the reason, not a traceback, and the warehouse keeps its rows."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import duckdb
import msgspec
from security_limits import fingerprint

from trajscope.format import encode
from warehouse import ingest_trajectories

ROOT = Path(__file__).parents[2]
sys.path.insert(0, str(ROOT / "tests" / "fixtures" / "app"))
from app_fixture_records import app_trajectories  # noqa: E402

LIMITED = textwrap.dedent("""
    import resource, signal, sys
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG, as with ENOSPC
    cap = int(sys.argv[1])
    resource.setrlimit(resource.RLIMIT_FSIZE, (cap, cap))
    from trajscope.cli import main
    main(sys.argv[2:])
""")


def test_an_ingest_out_of_disk_is_one_line_and_the_warehouse_keeps_its_rows(tmp_path):
    db = tmp_path / "w.duckdb"
    ingest_trajectories(db, app_trajectories())
    _, counts = fingerprint(db)
    base = app_trajectories()[0]
    log = tmp_path / "big.jsonl"
    with open(log, "wb") as out:  # 8 MB of new trajectories whose text does not compress
        for k in range(2000):
            t = msgspec.structs.replace(base, trajectory_id=f"{base.run.run_id}::big{k}",
                                        final_answer=os.urandom(2000).hex(),
                                        question=msgspec.structs.replace(base.question, question_id=f"big{k}"))
            out.write(encode(t) + b"\n")
    cap = db.stat().st_size + 2 * 2**20
    done = subprocess.run([sys.executable, "-c", LIMITED, str(cap), "ingest", str(log), "--db", str(db)],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    output = done.stdout + done.stderr
    assert done.returncode != 0 and "Traceback" not in output, output[-3000:]
    errors = [line for line in output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and "ingest stopped: File too large" in errors[0], output[-3000:]
    assert fingerprint(db)[1] == counts
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM trajectories WHERE question_id LIKE 'big%'").fetchall() == [(0,)]
