"""The query worker: it dies with its parent (PR_SET_PDEATHSIG), a stop at a limit names the limit that was
really hit with its figure (the worker's address space, an inherited ulimit -v, DuckDB's memory limit, the
time limit with the time it stopped at), and a result-size flag moves the worker's bound with it."""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from security_limits import SMALL, fingerprint

import trajscope.warehouse.read._query as query_module
from trajscope.cli import main
from trajscope.warehouse import LimitExceeded, QueryTimeout, ReadLimits, run_read_query
from trajscope.warehouse.read._limits import LimitAboveMachine, machine_memory_mb, worker_address_space_mb
from trajscope.warehouse.read._worker import address_space_bytes

ROOT = Path(__file__).parents[2]
WORKER_MARK = "warehouse.read._worker import main"


def _children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(c) for c in (task / "children").read_text().split()]
    return found


def _gone(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return True
    return "zombie" in status


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_killed_parent_leaves_no_query_worker_running(warehouse_db, read_tmp):
    # A query that runs for minutes, in a caller that is then SIGKILLed (no finally, no atexit runs).
    script = textwrap.dedent(f"""
        from trajscope.warehouse import ReadLimits, run_read_query
        run_read_query({str(warehouse_db)!r}, "SELECT count(*) FROM range(1000000000000) t(i) WHERE i % 7 = 3",
                       limits=ReadLimits(timeout_s=600, threads=1))
    """)
    parent = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        workers: list[int] = []
        for _ in range(600):  # up to 60 s for the worker to start on a loaded machine
            workers = [c for c in _children(parent.pid)
                       if WORKER_MARK in Path(f"/proc/{c}/cmdline").read_bytes().decode(errors="replace")]
            if workers:
                break
            assert parent.poll() is None, "the caller ended before its worker started"
            time.sleep(0.1)
        assert workers, "no query worker started"
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait()
        for _ in range(100):  # the kernel signals the orphan at once; 10 s is generous
            if all(_gone(w) for w in workers):
                break
            time.sleep(0.1)
        assert all(_gone(w) for w in workers), f"query worker {workers} outlived its killed parent"
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()


def test_a_worker_of_a_dead_caller_exits_before_running_anything(tmp_path):
    # The window between fork and prctl: a worker whose parent is already gone (a pid that is not its
    # parent's) exits at once, with no status written.
    done = subprocess.run([sys.executable, "-c", query_module._BOOTSTRAP, str(ROOT), "1"], input=b"{}",
                          capture_output=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 1 and done.stdout == b"" and b"Traceback" not in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_single_value_past_the_worker_bound_names_the_address_space_limit(warehouse_db, read_tmp):
    # One 1.5 GB value built inside a function (DuckDB's buffer manager does not see that allocation; it
    # says "bad allocation" when the operating system refuses it): the worker's address space stops it.
    with pytest.raises(LimitExceeded) as stopped:
        run_read_query(warehouse_db, "SELECT length(repeat('a', 1500000000)) AS n", limits=SMALL)
    cap = address_space_bytes(SMALL) / 2**20
    message = str(stopped.value)
    assert stopped.value.limit == "address_space", message
    assert f"address-space limit of {cap:,.0f} MB" in message
    assert f"memory limit of {SMALL.memory_limit_mb:,} MB" in message and "\n" not in message
    assert list(read_tmp.iterdir()) == []


def test_a_query_past_duckdbs_memory_limit_names_that_limit(warehouse_db, read_tmp):
    # A sort that may not spill (temp disk 1 MB): DuckDB's buffer pool is what runs out here.
    limits = SMALL.with_overrides(memory_limit_mb=64, max_temp_mb=1, timeout_s=60)
    with pytest.raises(LimitExceeded) as stopped:
        run_read_query(warehouse_db, "SELECT list(i::VARCHAR || 'xxxxxxxxxxxxxxxxxxxxxxxx') AS l FROM range(20000000) "
                       "t(i)", limits=limits)
    message = str(stopped.value)
    assert stopped.value.limit in ("memory_limit_mb", "max_temp_mb"), message
    if stopped.value.limit == "memory_limit_mb":
        assert "DuckDB's memory limit of 64 MB" in message
    else:
        assert "temp disk than the limit of 1 MB" in message
    assert "address-space" not in message


def test_the_cli_names_the_address_space_limit_with_its_figure(warehouse_db):
    result = CliRunner().invoke(main, ["sql", "SELECT length(repeat('a', 1500000000)) AS n", "--db", str(warehouse_db),
                                       "--memory-limit-mb", "256", "--max-result-mb", "2", "--threads", "1"])
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert result.exit_code != 0 and len(errors) == 1, result.output
    cap = worker_address_space_mb(ReadLimits(memory_limit_mb=256, max_result_mb=2))
    assert f"address-space limit of {cap:,.0f} MB" in errors[0] and "(raise it with" not in errors[0]


ULIMIT_SCRIPT = textwrap.dedent("""
    import json, resource, sys
    cap = int(sys.argv[2]) * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    from click.testing import CliRunner
    from trajscope.cli import main
    out = []
    for sql in json.loads(sys.argv[3]):
        result = CliRunner().invoke(main, ["sql", sql, "--db", sys.argv[1], "--threads", "1"])
        out.append([result.exit_code, result.output])
    print(json.dumps(out))
""")


def test_under_an_inherited_ulimit_a_small_query_runs_and_a_large_one_names_the_ulimit(warehouse_db):
    # The issue: under `ulimit -v 2000000`, `sql "SELECT 1"` said it needed more than 1,024 MB and advised
    # raising --memory-limit-mb. The worker now runs under the inherited bound and says when that bound hit.
    ulimit_mb = int(worker_address_space_mb(ReadLimits())) - 200  # below what the default limits ask for
    done = subprocess.run([sys.executable, "-c", ULIMIT_SCRIPT, str(warehouse_db), str(ulimit_mb),
                           json.dumps(["SELECT 1 AS one", "SELECT length(repeat('a', 2000000000)) AS n"])],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    (small_code, small_out), (large_code, large_out) = json.loads(done.stdout.splitlines()[-1])
    assert small_code == 0 and "(1 row)" in small_out, small_out
    assert large_code != 0 and "Traceback" not in large_out
    assert f"ran out of address space at {ulimit_mb:,} MB, the limit this process inherited (ulimit -v)" \
        in large_out, large_out
    assert "raise it with --memory-limit-mb" not in large_out


def test_a_function_deaf_to_the_interrupt_is_stopped_near_the_time_limit(warehouse_db, read_tmp):
    # The issue: lpad to 2 GB ran 35.8 s against a 10 s limit (the caller waited the limit, the lock wait
    # and a 10 s grace) while the message said it stopped at the limit. The bound below is the time limit
    # plus the lock wait: the old supervision could not stop before it, the new one stops a second after.
    limits = ReadLimits(timeout_s=1.0, lock_wait_s=60.0, memory_limit_mb=4096, max_result_mb=2, threads=1)
    started = time.monotonic()
    with pytest.raises(QueryTimeout) as stopped:
        run_read_query(warehouse_db, "SELECT length(lpad('a', 2000000000, 'b')) AS n", limits=limits)
    elapsed = time.monotonic() - started
    message = str(stopped.value)
    assert "time limit of 1 s" in message, message
    killed_at = float(re.search(r"killed at ([\d.]+) s", message).group(1))
    assert killed_at >= limits.timeout_s + query_module._STOP_GRACE_S, message
    assert elapsed < limits.timeout_s + limits.lock_wait_s, elapsed
    assert list(read_tmp.iterdir()) == [], "the killed worker's folder was left behind"


def test_an_interrupted_query_says_the_limit_and_when_it_stopped(warehouse_db):
    with pytest.raises(QueryTimeout) as stopped:
        run_read_query(warehouse_db, "SELECT count(*) FROM range(1000000000000) t(i) WHERE i % 7 = 3",
                       limits=SMALL.with_overrides(timeout_s=0.5))
    stopped_at = float(re.search(r"time limit of 0.5 s \(it stopped at ([\d.]+) s\)", str(stopped.value)).group(1))
    assert stopped_at >= 0.5


def test_the_result_size_flag_moves_the_worker_bound_with_it(warehouse_db, read_tmp):
    # A 150 MB value: refused at a 100 MB result limit by the result limit itself (not by memory), and
    # returned whole at 200 MB, because the worker's address space grew with the asked result size.
    sql = "SELECT repeat('a', 150000000) AS x"
    base = SMALL.with_overrides(timeout_s=60)
    with pytest.raises(LimitExceeded) as refused:
        run_read_query(warehouse_db, sql, limits=base.with_overrides(max_result_mb=100))
    assert refused.value.limit == "max_result_mb" and "size limit of 100 MB" in str(refused.value)
    lifted = base.with_overrides(max_result_mb=200)
    assert address_space_bytes(lifted) - address_space_bytes(base) >= 2 * (200 - 2) * 2**20
    result = run_read_query(warehouse_db, sql, limits=lifted)
    assert result.df.height == 1 and len(result.df["x"][0]) == 150_000_000
    assert list(read_tmp.iterdir()) == []


@pytest.mark.parametrize("flags", [["--max-result-mb", "1000000"], ["--memory-limit-mb", "1000000"]])
def test_a_limit_above_the_machine_is_refused_in_one_line(flags, warehouse_db, baseline):
    # The issue: --max-result-mb 1000000 lifted the worker's cap to about 2 TB, so it bounded nothing.
    result = CliRunner().invoke(main, ["sql", "SELECT 1", "--db", str(warehouse_db), *flags])
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert result.exit_code != 0 and len(errors) == 1, result.output
    machine = machine_memory_mb()
    assert f"more than this machine's {machine:,.0f} MB of memory" in errors[0] and "lower --max-result-mb" in errors[0]
    with pytest.raises(LimitAboveMachine):
        run_read_query(warehouse_db, "SELECT 1", limits=ReadLimits(max_result_mb=machine))
    assert fingerprint(warehouse_db) == baseline


def test_the_worker_cap_is_the_inherited_limit_where_that_is_lower():
    code = ("import resource; resource.setrlimit(resource.RLIMIT_AS, (2500 * 2**20, 2500 * 2**20)); "
            "from trajscope.warehouse import ReadLimits; "
            "from trajscope.warehouse.read._worker import address_space_bytes; "
            "print(address_space_bytes(ReadLimits()) // 2**20, "
            "address_space_bytes(ReadLimits(memory_limit_mb=16, max_result_mb=1)) // 2**20)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["2500", str(int(worker_address_space_mb(ReadLimits(memory_limit_mb=16,
                                                                                     max_result_mb=1))))]
