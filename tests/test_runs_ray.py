"""Runs across machines on Ray: shards partition a run, a shard resumes, and a two-node cluster that loses
a node mid-run ends with the warehouse of a single-process run of the same matrix."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from trajscope.cli import main
from trajscope.engine.distributed import PlanError, SharedStorage, plan_matrix, run_shard
from trajscope.engine.mock_llm import reply_tool_call
from trajscope.engine.runs import RunSpec, Shard, load_matrix
from trajscope.format import iter_trajectories

REPO = Path(__file__).resolve().parent.parent
# What differs between two runs of the same matrix by construction: clocks (every *_at column and
# timestamp), latencies, the record hash over them, and which file a line came from.
VARYING = {"latency_ms", "total_latency_ms", "step_latency_ms", "record_hash", "source_file"}
BOOKKEEPING = {"schema_migrations", "views_state"}  # the warehouse's own state, not the data


def search_then_final(request):
    """Tool protocol: search once, then answer (deterministic, so two runs of a matrix agree)."""
    if any(m.get("role") == "tool" for m in request.messages):
        return reply_tool_call("final", {"answer": "Denmore"})
    return reply_tool_call("search", {"query": "bridge"})


def write_matrix(path: Path, model: str, n: int) -> Path:
    path.write_text(json.dumps({
        "dataset": "demo", "n": n, "seed": 3, "model": model, "retriever": "bm25", "cache": False,
        "concurrency": 1, "params": {"max_turns": 3},
        "runs": [{"controller": "read_gate", "condition": "baseline"},
                 {"controller": "read_gate", "condition": "read_gate"}],
    }))
    return path


def warehouse_rows(db: Path, like: dict[str, list[tuple]] | None = None) -> dict[str, list[tuple]]:
    """Every data table's rows without the columns that vary by construction, sorted; with `like`, the relations
    (tables or a lake catalog's views) of those names."""
    rows = {}
    kinds = "('BASE TABLE')" if like is None else "('BASE TABLE', 'VIEW')"
    with duckdb.connect(str(db), read_only=True) as con:
        columns = con.execute(
            "SELECT c.table_name, list(c.column_name ORDER BY c.ordinal_position) FROM information_schema.columns c "
            f"JOIN information_schema.tables t USING (table_schema, table_name) WHERE t.table_type IN {kinds} "
            "AND c.column_name NOT LIKE '%\\_at' ESCAPE '\\' AND c.data_type NOT LIKE 'TIMESTAMP%' GROUP BY 1"
        ).fetchall()
        for table, names in columns:
            if table not in BOOKKEEPING and (like is None or table in like):
                listed = ", ".join(f'"{c}"' for c in names if c not in VARYING)
                rows[table] = con.execute(f"SELECT {listed} FROM {table} ORDER BY ALL").fetchall()
    return rows


def test_shards_split_a_selection_into_disjoint_parts_that_cover_it():
    selection = list(range(11))
    parts = [Shard(i, 4).pick(selection) for i in range(4)]
    assert sorted(x for part in parts for x in part) == selection
    assert {len(p) for p in parts} == {2, 3}
    assert Shard(1, 4).log_name("r") == "r.shard-002-of-004.jsonl"
    with pytest.raises(ValueError):
        Shard(4, 4)


def test_the_plan_keeps_the_local_run_ids_and_refuses_logs_it_would_not_resume(mock_llm, tmp_path):
    specs = load_matrix(write_matrix(tmp_path / "m.yaml", mock_llm.model_spec, 5), out_dir=str(tmp_path / "runs"))
    plan = plan_matrix(specs, shards=8)  # capped at the 5 questions of each run
    assert plan.total == 10 and len(plan.tasks) == 10
    assert {t.run_id for t in plan.tasks} == {s.resolved_run_id() for s in specs}
    assert {t.storage for t in plan.tasks} == {str((tmp_path / "runs").resolve())}
    assert len({t.started_at for t in plan.tasks if t.run_id == specs[0].resolved_run_id()}) == 1
    assert all(t.spec.db_path is None and not t.spec.progress for t in plan.tasks)

    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / Shard(0, 2).log_name(specs[0].resolved_run_id())).write_text("")
    with pytest.raises(PlanError, match="another number of shards"):
        plan_matrix(specs, shards=3)
    (tmp_path / "runs" / Shard(0, 2).log_name(specs[0].resolved_run_id())).unlink()
    specs[1].log_path().write_text("")
    with pytest.raises(PlanError, match="single-machine log"):
        plan_matrix(specs, shards=2)


def test_a_shard_on_an_fsspec_url_runs_once_and_a_rerun_resumes_it(mock_llm, tmp_path):
    mock_llm.responder = search_then_final
    spec = RunSpec(dataset="demo", controller="read_gate", condition="baseline", model=mock_llm.model_spec, n=6,
                   seed=3, retriever="bm25", cache=False, progress=False, params={"max_turns": 3})
    task = plan_matrix([spec], shards=2, storage=f"file://{tmp_path}/store").tasks[1]
    first = run_shard(task)
    assert (first.n_selected, first.n_completed, first.n_skipped, first.attempt) == (3, 3, 0, 1)
    log = tmp_path / "store" / task.log_name
    ids = [d.trajectory.question.question_id for d in iter_trajectories(log)]
    assert len(ids) == 3 and len(set(ids)) == 3
    assert {d.trajectory.run.started_at for d in iter_trajectories(log)} == {task.started_at}

    again = run_shard(task)
    assert (again.n_completed, again.n_skipped, again.attempt) == (0, 3, 2)
    assert [d.trajectory.question.question_id for d in iter_trajectories(log)] == ids

    storage = SharedStorage(task.storage)  # what the driver reads to ingest a URL's shard
    assert storage.names(f"{task.run_id}.shard-*.jsonl") == [task.log_name]
    with storage.readable(task.log_name) as copy:
        assert copy != log and copy.read_bytes() == log.read_bytes()


def test_neither_the_package_nor_run_help_imports_ray():
    probe = ("import sys; import trajscope.engine.distributed; from click.testing import CliRunner; "
             "from trajscope.cli import main; r = CliRunner().invoke(main, ['run', '--help']); "
             "assert '--ray ADDRESS' in r.output, r.output; print('ray' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


def test_storage_without_ray_is_refused(tmp_path):
    result = CliRunner().invoke(main, ["run", "--dataset", "demo", "--controller", "direct", "--storage", "x",
                                       "--no-ingest"])
    assert result.exit_code == 2 and "--storage is for --ray runs" in result.output


def _victim_shard(out: Path, node_id: str, driver: subprocess.Popen, deadline_s: float = 240.0) -> str:
    """A shard log the given node is writing that holds at least one trajectory and is not finished."""
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        assert driver.poll() is None, driver.communicate()[1][-3000:]
        for attempts in out.glob("*.attempts"):
            records = [json.loads(line) for line in attempts.read_text().splitlines() if line.strip()]
            log = attempts.with_suffix(".jsonl")
            if records and records[-1]["node_id"] == node_id and log.exists():
                lines = log.read_bytes().count(b"\n")
                if 1 <= lines < 4:
                    return log.name
        time.sleep(0.05)
    raise AssertionError("no shard ran on the worker node in time")


@pytest.mark.slow
def test_a_matrix_on_two_ray_nodes_that_lose_one_equals_a_single_process_run(mock_llm, tmp_path, monkeypatch):
    from ray.cluster_utils import Cluster

    mock_llm.responder = search_then_final
    matrix = write_matrix(tmp_path / "m.yaml", mock_llm.model_spec, 8)
    local = CliRunner().invoke(main, ["run", "--matrix", str(matrix), "--db", str(tmp_path / "local.duckdb"),
                                      "--out", str(tmp_path / "local"), "--no-progress"], catch_exceptions=False)
    assert local.exit_code == 0, local.output

    mock_llm.latency_s = 0.4  # long enough shards that the kill lands inside one
    monkeypatch.setenv("PYTHONPATH", str(REPO))  # the nodes' workers import this checkout
    small = {"num_cpus": 1, "object_store_memory": 80 * 1024**2}
    cluster = Cluster(initialize_head=True, head_node_args={
        **small, "include_dashboard": False,
        # Declare a lost node dead within seconds, not Ray's default half minute.
        "_system_config": {"health_check_period_ms": 500, "health_check_failure_threshold": 3}})
    driver = None
    try:
        worker = cluster.add_node(**small)
        cluster.wait_for_nodes()
        out = tmp_path / "shared"
        driver = subprocess.Popen(
            [sys.executable, "-m", "trajscope", "run", "--matrix", str(matrix), "--ray", cluster.address,
             "--shards", "2", "--db", str(tmp_path / "ray.duckdb"), "--out", str(out), "--no-progress"],
            cwd=REPO, env={**os.environ}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        victim = _victim_shard(out, worker.node_id, driver)
        cluster.remove_node(worker, allow_graceful=False)
        stdout, stderr = driver.communicate(timeout=400)
        assert driver.returncode == 0, stdout + stderr[-3000:]
    finally:
        if driver is not None and driver.poll() is None:
            driver.kill()
            driver.wait()
        cluster.shutdown()

    attempts = [json.loads(line) for line in (out / victim).with_suffix(".attempts").read_text().splitlines()]
    assert len(attempts) >= 2 and attempts[0]["node_id"] == worker.node_id != attempts[-1]["node_id"]
    assert f"{victim}: ran {len(attempts)} attempts" in stdout
    victim_run = victim.split(".shard-")[0]
    [run_line] = [line for line in stdout.splitlines() if line.startswith(victim_run + ":")]
    assert int(re.search(r"(\d+) resumed", run_line).group(1)) >= 1, run_line  # the retry kept the lost node's lines
    for spec in load_matrix(matrix):
        run_id = spec.resolved_run_id()
        ids = [d.trajectory.question.question_id for log in sorted(out.glob(f"{run_id}.shard-*.jsonl"))
               for d in iter_trajectories(log)]
        assert len(ids) == 8 and len(set(ids)) == 8  # none lost, none duplicated
    ray_rows, local_rows = warehouse_rows(tmp_path / "ray.duckdb"), warehouse_rows(tmp_path / "local.duckdb")
    assert len(local_rows["trajectories"]) == 16 and len(local_rows["steps"]) > 16
    assert len(local_rows["judgments"]) >= 16 and len(local_rows["runs"]) == 2
    assert ray_rows.keys() == local_rows.keys()
    for table, rows in local_rows.items():
        assert ray_rows[table] == rows, table


@pytest.fixture
def one_node_cluster(monkeypatch):
    """A Ray head of one CPU on this machine (its workers import this checkout)."""
    from ray.cluster_utils import Cluster

    monkeypatch.setenv("PYTHONPATH", str(REPO))
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "object_store_memory": 80 * 1024**2,
                                                            "include_dashboard": False})
    try:
        yield cluster
    finally:
        cluster.shutdown()


def test_a_shard_that_fails_on_its_worker_is_reported_and_the_command_fails(one_node_cluster, mock_llm, tmp_path):
    # The driver cannot read this dataset either, so it plans --shards blind; each worker's load fails.
    matrix = tmp_path / "m.yaml"
    matrix.write_text(json.dumps({"dataset": str(tmp_path / "missing.jsonl"), "model": mock_llm.model_spec,
                                  "retriever": "bm25", "cache": False, "runs": [{"controller": "read_gate"}]}))
    result = CliRunner().invoke(main, ["run", "--matrix", str(matrix), "--ray", one_node_cluster.address,
                                       "--shards", "2", "--db", str(tmp_path / "w.duckdb"),
                                       "--out", str(tmp_path / "shared"), "--no-progress"])
    assert result.exit_code == 1, result.output
    failed = [line for line in result.output.splitlines() if ".shard-" in line and ": failed: " in line]
    assert len(failed) == 2 and all("missing.jsonl" in line for line in failed), result.output
    assert "2 shard(s) failed, 0 not ingested" in result.output
    assert not (tmp_path / "w.duckdb").exists()  # nothing finished, so nothing was ingested


def test_a_matrix_on_ray_adds_each_run_to_a_lake_whole_and_a_rerun_adds_nothing(one_node_cluster, mock_llm, tmp_path,
                                                                                 monkeypatch):
    from trajscope.warehouse.lake import lake_catalog

    monkeypatch.setenv("TRAJSCOPE_CACHE", str(tmp_path / "cache"))
    mock_llm.responder = search_then_final
    matrix = write_matrix(tmp_path / "m.yaml", mock_llm.model_spec, 6)
    local = CliRunner().invoke(main, ["run", "--matrix", str(matrix), "--db", str(tmp_path / "local.duckdb"),
                                      "--out", str(tmp_path / "local"), "--no-progress"], catch_exceptions=False)
    assert local.exit_code == 0, local.output
    lake = tmp_path / "lake"
    args = ["run", "--matrix", str(matrix), "--ray", one_node_cluster.address, "--shards", "2", "--lake", str(lake),
            "--out", str(tmp_path / "shared"), "--no-progress"]
    first = CliRunner().invoke(main, args)
    assert first.exit_code == 0, first.output
    # One writer per run, each holding both of its shards: a lake adds a run whole, never a shard of one.
    assert len([line for line in first.output.splitlines() if "added to" in line]) == 2, first.output
    markers = [json.loads(p.read_text()) for p in (lake / "_committed").iterdir()]
    assert sorted(len(m["runs"]) for m in markers) == [1, 1] and all(m["rows"]["trajectories"] == 6 for m in markers)
    local_rows = warehouse_rows(tmp_path / "local.duckdb")
    del local_rows["derived_facts_state"]  # a lake catalog's own bookkeeping: when it computed its derived tables
    lake_rows = warehouse_rows(lake_catalog(lake), like=local_rows)
    assert len(local_rows["trajectories"]) == 12 and len(local_rows["steps"]) > 12
    for table, rows in local_rows.items():
        assert lake_rows[table] == rows, table
    again = CliRunner().invoke(main, args)
    assert again.exit_code == 0, again.output
    assert again.output.count("already in the lake") == 2 and len(list((lake / "_committed").iterdir())) == 2
