"""A lake on object storage (warehouse.lake._remote): an S3 API (moto's server on loopback, standing in for a real
bucket through the same s3fs client) and a file:// URL. Writers upload and commit with create-only objects; readers
go through a local mirror; every view equals the same view over one warehouse file with the same logs."""
from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import fsspec
import pytest
from click.testing import CliRunner
from lake_support import (
    check_dashboard_reads_a_commit_made_while_it_runs,
    ingest_cli,
    rows_of,
    three_logs,
)
from moto.server import ThreadedMotoServer

from trajscope.cli import main as cli
from trajscope.warehouse import ingest_paths, load_views, open_readonly, run_read_query
from trajscope.warehouse.lake import LakeError, RemoteLake, export_lake, ingest_into_lake, lake_catalog, readable_lake

REGION = "eu-west-1"


@pytest.fixture(scope="module")
def s3_server() -> Iterator[str]:
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    try:
        yield f"http://{host}:{port}"
    finally:
        server.stop()


@pytest.fixture
def bucket(s3_server: str, monkeypatch, tmp_path: Path) -> str:
    """A new empty bucket; the AWS variables every s3fs client (this process and the CLI's) reads."""
    for name, value in {"AWS_ENDPOINT_URL": s3_server, "AWS_ACCESS_KEY_ID": "testing",
                        "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": REGION}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("TRAJSCOPE_CACHE", str(tmp_path / "cache"))
    name = f"lake-{uuid.uuid4().hex[:12]}"
    fsspec.filesystem("s3").mkdir(name, region_name=REGION)
    return name


@pytest.fixture
def logs(tmp_path: Path) -> dict[str, Path]:
    return three_logs(tmp_path)


def _objects(bucket: str) -> list[str]:
    fs = fsspec.filesystem("s3")
    fs.invalidate_cache()
    return sorted(p.removeprefix(f"{bucket}/lake/") for p in fs.find(f"{bucket}/lake"))


def _equal_to_one_warehouse(catalog: Path, single: Path) -> int:
    """Assert every table and named view of the catalog equals the single warehouse's; how many hold rows."""
    with open_readonly(single) as con:
        tables = [t for t, in con.execute("SELECT table_name FROM duckdb_tables() WHERE table_name NOT IN "
                                          "('schema_migrations', 'views_state')").fetchall()]
    compared = 0
    for relation in [*tables, *(v.name for v in load_views())]:
        expected = rows_of(single, relation)
        assert rows_of(catalog, relation) == expected, f"{relation}: the lake's rows differ from one warehouse's"
        compared += bool(expected)
    return compared


def test_every_view_over_an_s3_lake_fed_by_two_processes_at_once_equals_one_warehouse(bucket, logs, tmp_path):
    url = f"s3://{bucket}/lake"
    single, first = tmp_path / "single.duckdb", tmp_path / "a.duckdb"
    ingest_paths(single, [logs["a"], logs["b"], logs["c"]], progress=False)
    ingest_paths(first, [logs["a"]], progress=False)
    exported = export_lake(first, url)
    assert exported.lake == url and exported.rows["trajectories"] == 60
    mirrored = sorted(readable_lake(url).rglob("part_*.parquet"))
    assert mirrored and _objects(bucket)
    before = {p: p.stat().st_mtime_ns for p in mirrored}
    # Two writers at once through the CLI, each uploading under its own writer id; neither waits for the other.
    procs = [ingest_cli(str(logs[k]), "--lake", url) for k in ("b", "c")]
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        assert "writer" in out
    objects = _objects(bucket)
    markers = [o for o in objects if o.startswith("_committed/")]
    assert len(markers) == 3 and not [o for o in objects if "_staging" in o]
    fs = fsspec.filesystem("s3")
    listed = set()
    for marker in markers:  # each commit lists exactly the files its writer uploaded
        listed |= set(json.loads(fs.cat_file(f"{bucket}/lake/{marker}"))["files"])
    assert listed == {o for o in objects if o.endswith(".parquet")}
    catalog = lake_catalog(url)
    assert _equal_to_one_warehouse(catalog, single) >= 20
    assert len(rows_of(catalog, "trajectories")) == 60 + 50 + 60 and len(rows_of(catalog, "questions")) == 30
    # The mirror fetched only the new writers' files: the first writer's are the same files as before.
    assert {p: p.stat().st_mtime_ns for p in mirrored} == before


def test_an_s3_lake_refuses_a_held_run_and_a_writer_failing_before_its_commit_leaves_nothing(
        bucket, logs, tmp_path, monkeypatch):
    url = f"s3://{bucket}/lake"
    db = tmp_path / "a.duckdb"
    ingest_paths(db, [logs["a"]], progress=False)
    export_lake(db, url)
    objects = _objects(bucket)
    with pytest.raises(LakeError, match="'ra-base' is already in the lake"):
        ingest_into_lake(url, [logs["a"]], progress=False)
    assert _objects(bucket) == objects
    # Two writers claiming one run: the store's create-only write lets exactly one have it.
    lake = RemoteLake(url)
    lake.claim("rz-new", "writer-1")
    with pytest.raises(LakeError, match="'rz-new' is already in the lake or being added.*writer-1"):
        lake.claim("rz-new", "writer-2")
    real = RemoteLake.commit

    def killed_at_commit(self, writer, commit):
        # Everything is uploaded by now: what a kill just before the commit leaves behind.
        assert [f for f in commit["files"] if "_run=rb-base" in f]
        raise KeyboardInterrupt

    monkeypatch.setattr(RemoteLake, "commit", killed_at_commit)
    with pytest.raises(KeyboardInterrupt):
        ingest_into_lake(url, [logs["b"]], progress=False)
    monkeypatch.setattr(RemoteLake, "commit", real)
    left = [o for o in _objects(bucket) if o not in objects]
    assert left == [o for o in left if o.startswith("_claims/")] and len(left) == 1  # the test's own claim only
    assert run_read_query(lake_catalog(url), "SELECT count(*) AS n FROM trajectories").df["n"][0] == 60
    again = ingest_into_lake(url, [logs["b"]], progress=False)  # its claims were released
    assert again.rows["trajectories"] == 50
    assert run_read_query(lake_catalog(url), "SELECT count(*) AS n FROM trajectories").df["n"][0] == 110


def test_sql_and_writers_over_an_s3_lake_read_its_mirror_inside_the_sandbox(bucket, logs, tmp_path):
    url = f"s3://{bucket}/lake"
    runner = CliRunner()
    db = tmp_path / "a.duckdb"
    assert runner.invoke(cli, ["ingest", str(logs["a"]), "--db", str(db)]).exit_code == 0
    done = runner.invoke(cli, ["lake", "export", url, "--db", str(db)])
    assert done.exit_code == 0, done.output
    done = runner.invoke(cli, ["sql", "SELECT run_id, n_trajectories FROM run_summary ORDER BY run_id",
                               "--lake", url, "--format", "csv"])
    assert done.exit_code == 0, done.output
    assert done.output.splitlines() == ["run_id,n_trajectories", "ra-base,30", "ra-gate,30"]
    parquet = next(readable_lake(url).rglob("part_*.parquet"))
    for query in (f"SELECT * FROM read_parquet('{parquet}')", f"SELECT * FROM read_parquet('{url}/**/*.parquet')"):
        refused = runner.invoke(cli, ["sql", query, "--lake", url])
        assert refused.exit_code != 0 and ("reads files" in refused.output or "not allowed" in refused.output), \
            refused.output
    writers = runner.invoke(cli, ["lake", "writers", url])
    assert writers.exit_code == 0 and "60 trajectories" in writers.output
    missing = runner.invoke(cli, ["sql", "SELECT 1", "--lake", f"s3://{bucket}/nothing-here"])
    assert missing.exit_code != 0 and "not a trajscope lake" in missing.output


def test_a_file_url_lake_skips_a_marker_still_being_written_and_equals_one_warehouse(logs, tmp_path, monkeypatch):
    monkeypatch.setenv("TRAJSCOPE_CACHE", str(tmp_path / "cache"))
    store = tmp_path / "store"
    url = f"file://{store}"
    single, first = tmp_path / "single.duckdb", tmp_path / "a.duckdb"
    ingest_paths(single, [logs["a"], logs["b"]], progress=False)
    ingest_paths(first, [logs["a"]], progress=False)
    export_lake(first, url)
    # A local store writes a marker in steps: half of one is not a commit, so no reader takes it for one.
    (store / "_committed" / ("f" * 32)).write_text('{"writer": "' + "f" * 32)
    ingest_into_lake(url, [logs["b"]], progress=False)
    assert _equal_to_one_warehouse(lake_catalog(url), single) >= 20
    assert not (readable_lake(url) / "_committed" / ("f" * 32)).exists()
    # A lake a folder writer made (its markers list no files), read by file:// URL as a store.
    folder = tmp_path / "folder-lake"
    export_lake(first, folder)
    assert run_read_query(lake_catalog(f"file://{folder}"), "SELECT count(*) AS n FROM trajectories").df["n"][0] == 60
    with pytest.raises(LakeError, match="holds objects and is not a trajscope lake"):
        (tmp_path / "other").mkdir()
        (tmp_path / "other" / "notes.txt").write_text("x")
        export_lake(first, f"file://{tmp_path / 'other'}")


def test_the_dashboard_over_an_s3_lake_reads_a_commit_made_while_it_runs(bucket, logs, tmp_path, monkeypatch):
    check_dashboard_reads_a_commit_made_while_it_runs(f"s3://{bucket}/lake", logs, tmp_path, monkeypatch)


def test_a_commit_naming_a_file_outside_its_writers_places_is_refused_before_anything_is_written(logs, tmp_path,
                                                                                                 monkeypatch):
    monkeypatch.setenv("TRAJSCOPE_CACHE", str(tmp_path / "cache"))
    store = tmp_path / "store"
    db = tmp_path / "a.duckdb"
    ingest_paths(db, [logs["a"]], progress=False)
    export_lake(db, f"file://{store}")
    (tmp_path / "outside.parquet").write_bytes(b"not a lake's")
    for named in ("../../outside.parquet", "trajectories/_dataset=x/_run=y/_writer=someone-else/part_1.parquet",
                  "trajectories/_dataset=x/../_writer={writer}/part_1.parquet"):
        writer = uuid.uuid4().hex
        files = [named.format(writer=writer)]
        (store / "_committed" / writer).write_text(json.dumps({"writer": writer, "runs": [], "files": files}))
        with pytest.raises(LakeError, match="not one of its files in a lake's layout"):
            lake_catalog(f"file://{store}")
        (store / "_committed" / writer).unlink()
        assert not list((tmp_path / "cache").rglob("outside.parquet"))
    assert run_read_query(lake_catalog(f"file://{store}"), "SELECT count(*) AS n FROM trajectories").df["n"][0] == 60


def test_a_store_without_a_known_atomic_create_is_read_as_a_lake_but_never_written(logs, tmp_path, monkeypatch):
    monkeypatch.setenv("TRAJSCOPE_CACHE", str(tmp_path / "cache"))
    folder, db = tmp_path / "folder-lake", tmp_path / "a.duckdb"
    ingest_paths(db, [logs["a"]], progress=False)
    export_lake(db, folder)
    memory = fsspec.filesystem("memory")  # fsspec's in-process store: its "xb" checks, then writes, in two steps
    memory.put(str(folder), f"/{tmp_path.name}", recursive=True)
    url = f"memory://{tmp_path.name}"
    assert run_read_query(lake_catalog(url), "SELECT count(*) AS n FROM trajectories").df["n"][0] == 60
    before = sorted(memory.find(f"/{tmp_path.name}"))
    with pytest.raises(LakeError, match="needs a create-only write that the store makes atomic"):
        ingest_into_lake(url, [logs["b"]], progress=False)
    assert sorted(memory.find(f"/{tmp_path.name}")) == before
