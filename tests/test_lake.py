"""The lake (warehouse.lake, `trajscope lake`): export, concurrent ingests from two processes, and every view
over the lake equal to the same view over one warehouse file holding the same logs."""
from __future__ import annotations

import contextlib
import json
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner
from lake_support import (
    check_dashboard_reads_a_commit_made_while_it_runs,
    ingest_cli,
    rows_of,
    synthetic_log,
    three_logs,
)

from trajscope.cli import main as cli
from trajscope.format import RecordError
from trajscope.warehouse import load_views, open_readonly, run_read_query
from trajscope.warehouse.lake import LakeError, export_lake, ingest_into_lake, lake_catalog
from trajscope.warehouse.lake import _write as lake_write


@pytest.fixture
def logs(tmp_path: Path) -> dict[str, Path]:
    return three_logs(tmp_path)


def test_every_view_over_a_lake_fed_by_two_processes_at_once_equals_one_warehouse(logs, tmp_path, monkeypatch):
    monkeypatch.setenv("TRAJSCOPE_CACHE", str(tmp_path / "cache"))
    lake, single, first = tmp_path / "lake", tmp_path / "single.duckdb", tmp_path / "a.duckdb"
    for db, files in ((first, [logs["a"]]), (single, [logs["a"], logs["b"], logs["c"]])):
        proc = ingest_cli(*map(str, files), "--db", str(db))
        assert proc.wait() == 0, proc.stderr.read()
    exported = export_lake(first, lake)
    assert sorted(exported.runs) == ["ra-base", "ra-gate"] and exported.rows["trajectories"] == 60
    assert _trajectory_count(lake_catalog(lake)) == 60  # so the catalog below extends this snapshot's
    # Two writers at once, each adding its own partitions; neither waits for the other.
    procs = [ingest_cli(str(logs[k]), "--lake", str(lake)) for k in ("b", "c")]
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        assert "writer" in out
    assert len(list((lake / "_committed").iterdir())) == 3
    catalog = lake_catalog(lake)
    names = [v.name for v in load_views()]
    with open_readonly(single) as con:
        tables = [t for t, in con.execute("SELECT table_name FROM duckdb_tables() WHERE table_name NOT IN "
                                          "('schema_migrations', 'views_state')").fetchall()]
    assert len(names) > 40 and "trajectories" in tables
    compared = 0
    for relation in [*tables, *names]:
        expected = rows_of(single, relation)
        assert rows_of(catalog, relation) == expected, f"{relation}: the lake's rows differ from one warehouse's"
        compared += bool(expected)
    assert compared >= 20  # most views hold rows for these logs, so equality is not of empty sets
    assert rows_of(catalog, "trajectories")[0] and len(rows_of(catalog, "trajectories")) == 60 + 50 + 60
    # The questions every log shares are stored once, not once per writer.
    assert len(rows_of(catalog, "questions")) == 30


def test_lake_refuses_a_run_it_holds_and_a_changed_gold_and_commits_nothing(logs, tmp_path, monkeypatch):
    monkeypatch.setenv("TRAJSCOPE_CACHE", str(tmp_path / "cache"))
    lake, db = tmp_path / "lake", tmp_path / "a.duckdb"
    from trajscope.warehouse import ingest_paths

    ingest_paths(db, [logs["a"]], progress=False)
    export_lake(db, lake)
    with pytest.raises(LakeError, match="'ra-base' is already in the lake"):
        ingest_into_lake(lake, [logs["a"]], progress=False)
    changed = synthetic_log(tmp_path / "changed.jsonl", ["rz-base"], 5, seed=9, gold_shift=1)
    with pytest.raises(RecordError, match="conflicting gold_answer"):
        ingest_into_lake(lake, [changed], progress=False)
    assert len(list((lake / "_committed").iterdir())) == 1
    assert not list(lake.glob("*/_dataset=*/_run=rz-base"))
    assert run_read_query(lake_catalog(lake), "SELECT count(*) AS n FROM trajectories").df["n"][0] == 60


def test_a_writer_that_fails_before_its_commit_leaves_no_visible_row_and_frees_its_runs(logs, tmp_path, monkeypatch):
    monkeypatch.setenv("TRAJSCOPE_CACHE", str(tmp_path / "cache"))
    lake, db = tmp_path / "lake", tmp_path / "a.duckdb"
    from trajscope.warehouse import ingest_paths

    ingest_paths(db, [logs["a"]], progress=False)
    export_lake(db, lake)
    real = lake_write._write_atomically

    def fail_on_commit(path: Path, data: bytes) -> None:
        if path.parent.name == "_committed":
            # The partitions are written by now: what a kill just before the commit leaves.
            assert list(lake.glob("trajectories/_dataset=*/_run=rb-base/_writer=*"))
            raise KeyboardInterrupt
        real(path, data)

    monkeypatch.setattr(lake_write, "_write_atomically", fail_on_commit)
    with pytest.raises(KeyboardInterrupt):
        ingest_into_lake(lake, [logs["b"]], progress=False)
    monkeypatch.setattr(lake_write, "_write_atomically", real)
    assert run_read_query(lake_catalog(lake), "SELECT count(*) AS n FROM trajectories").df["n"][0] == 60
    assert not list(lake.glob("trajectories/_dataset=*/_run=rb-base/_writer=*"))
    again = ingest_into_lake(lake, [logs["b"]], progress=False)  # its claims were released
    assert again.rows["trajectories"] == 50
    assert run_read_query(lake_catalog(lake), "SELECT count(*) AS n FROM trajectories").df["n"][0] == 110


def test_sql_over_a_lake_is_sandboxed_and_reads_through_the_named_views(logs, tmp_path, monkeypatch):
    monkeypatch.setenv("TRAJSCOPE_CACHE", str(tmp_path / "cache"))
    lake, db = tmp_path / "lake", tmp_path / "a.duckdb"
    runner = CliRunner()
    assert runner.invoke(cli, ["ingest", str(logs["a"]), "--db", str(db)]).exit_code == 0
    done = runner.invoke(cli, ["lake", "export", str(lake), "--db", str(db)])
    assert done.exit_code == 0, done.output
    done = runner.invoke(cli, ["sql", "SELECT run_id, n_trajectories FROM run_summary ORDER BY run_id",
                               "--lake", str(lake), "--format", "csv"])
    assert done.exit_code == 0, done.output
    assert done.output.splitlines() == ["run_id,n_trajectories", "ra-base,30", "ra-gate,30"]
    parquet = next(lake.glob("trajectories/**/part_*.parquet"))
    for query in (f"SELECT * FROM read_parquet('{parquet}')", "SELECT * FROM read_csv('/etc/passwd')",
                  "COPY (SELECT 1) TO 'x.csv'"):
        refused = runner.invoke(cli, ["sql", query, "--lake", str(lake)])
        assert refused.exit_code != 0 and ("reads files" in refused.output or "not allowed" in refused.output), \
            refused.output
    # The catalog's connection can read the lake's files and nothing outside it, even through DuckDB itself.
    catalog = lake_catalog(lake)
    from trajscope.warehouse.read import DEFAULT_LIMITS
    from trajscope.warehouse.read._open import connect_sandboxed

    con = connect_sandboxed(catalog, DEFAULT_LIMITS, tmp_path / "spill")
    try:
        assert con.execute(f"SELECT count(*) FROM read_parquet('{parquet}')").fetchone()[0] > 0
        with pytest.raises(duckdb.PermissionException):
            con.execute("SELECT * FROM read_csv('/etc/passwd')")
        with pytest.raises(duckdb.Error):
            con.execute("SET enable_external_access = true")
    finally:
        con.close()
    writers = runner.invoke(cli, ["lake", "writers", str(lake)])
    assert writers.exit_code == 0 and "60 trajectories" in writers.output
    assert json.loads(next((lake / "_committed").iterdir()).read_text())["runs"] == ["ra-base", "ra-gate"]


def _trajectory_count(db: Path) -> int:
    return run_read_query(db, "SELECT count(*) AS n FROM trajectories").df["n"][0]


def test_a_catalog_reads_one_snapshot_with_its_derived_tables_stored_and_a_commit_makes_the_next(
        logs, tmp_path, monkeypatch):
    monkeypatch.setenv("TRAJSCOPE_CACHE", str(tmp_path / "cache"))
    lake, db = tmp_path / "lake", tmp_path / "a.duckdb"
    from trajscope.warehouse import ingest_paths
    from trajscope.warehouse.lake import _catalog, lake_catalog_built

    ingest_paths(db, [logs["a"]], progress=False)
    export_lake(db, lake)
    entered: list[int] = []

    @contextlib.contextmanager
    def building():  # what the dashboard shows a spinner in
        entered.append(1)
        yield

    first = lake_catalog(lake, building=building)
    assert lake_catalog_built(lake) and lake_catalog(lake, building=building) == first
    assert entered == [1]  # around the build only: a snapshot already built is opened without it
    with open_readonly(first) as con:
        stored = {t for t, in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
        funnel = con.execute("SELECT count(DISTINCT trajectory_id) FROM evidence_funnel_facts").fetchone()[0]
    # The derived tables are tables of the catalog (computed once), and so are the questions' distinct rows (read by
    # nearly every page); the other warehouse tables are views over the lake.
    assert {"evidence_funnel_facts", "trajectory_funnel_facts", "trajectory_signals", "questions"} <= stored
    assert "trajectories" not in stored and "chunks" not in stored and funnel == 60
    assert rows_of(first, "questions") == rows_of(db, "questions")
    assert rows_of(first, "evidence_funnel_facts") == rows_of(db, "evidence_funnel_facts")

    ingest_into_lake(lake, [logs["b"]], progress=False)
    assert not lake_catalog_built(lake)  # the commit made a new snapshot
    assert _trajectory_count(first) == 60  # the old snapshot still reads what it read: no page sees half a commit
    recomputed: list[str] = []
    real_recompute = _catalog.recompute_facts
    monkeypatch.setattr(_catalog, "recompute_facts",
                        lambda con, d: (recomputed.append(d.table), real_recompute(con, d)))
    second = lake_catalog(lake, building=building)
    assert second != first and _trajectory_count(second) == 110 and entered == [1, 1]
    assert recomputed == []  # it started from the first snapshot's rows and refreshed the new writer's
    with open_readonly(second) as con:
        assert con.execute("SELECT count(DISTINCT trajectory_id) FROM evidence_funnel_facts").fetchone()[0] == 110
    # Equal, table by table, to a catalog of the same snapshot computed whole.
    monkeypatch.setenv("TRAJSCOPE_CACHE", str(tmp_path / "cache-whole"))
    whole = lake_catalog(lake)
    assert len(recomputed) == 4 and whole != second
    for table in ("evidence_funnel_facts", "trajectory_funnel_facts", "judgment_score_facts", "trajectory_signals",
                  "derived_facts_state", "questions"):
        assert rows_of(second, table) == rows_of(whole, table), table
    with open_readonly(second) as con:  # the extended questions: each key once, both logs' questions
        n, keys = con.execute("SELECT count(*), count(DISTINCT (dataset, question_id)) FROM questions").fetchone()
    assert n == keys == 30
    monkeypatch.setenv("TRAJSCOPE_CACHE", str(tmp_path / "cache"))
    # The superseded catalog stays while a reader that resolved it may still open it, then goes.
    assert first.exists()
    monkeypatch.setattr(_catalog, "_SUPERSEDED_KEEP_S", 0.0)
    assert lake_catalog(lake) == second
    assert not first.exists() and not first.with_name(first.name + ".lake").exists() and second.exists()


def test_two_readers_of_a_new_snapshot_build_its_catalog_once(logs, tmp_path, monkeypatch):
    import threading
    import time

    from trajscope.warehouse.lake import _catalog

    monkeypatch.setenv("TRAJSCOPE_CACHE", str(tmp_path / "cache"))
    lake, db = tmp_path / "lake", tmp_path / "a.duckdb"
    from trajscope.warehouse import ingest_paths

    ingest_paths(db, [logs["a"]], progress=False)
    export_lake(db, lake)
    builds, real = [], _catalog._build

    def slow_build(*args):
        builds.append(args)
        time.sleep(0.5)  # long enough that the second reader arrives while the first builds
        real(*args)

    monkeypatch.setattr(_catalog, "_build", slow_build)
    got: list[Path] = []
    readers = [threading.Thread(target=lambda: got.append(lake_catalog(lake))) for _ in range(2)]
    for reader in readers:
        reader.start()
    for reader in readers:
        reader.join(timeout=120)
    assert len(got) == 2 and got[0] == got[1] and len(builds) == 1
    assert _trajectory_count(got[0]) == 60


def test_the_dashboard_over_a_lake_reads_a_commit_made_while_it_runs(logs, tmp_path, monkeypatch):
    from trajscope.app.access import load_config

    monkeypatch.setenv("TRAJSCOPE_CACHE", str(tmp_path / "cache"))
    lake = tmp_path / "lake"
    check_dashboard_reads_a_commit_made_while_it_runs(lake, logs, tmp_path, monkeypatch)
    assert load_config().db_path == lake_catalog(lake)


def test_a_corpus_a_later_writer_adds_refreshes_the_stored_trajectories_it_names(logs, tmp_path, monkeypatch):
    from trajscope.format import Chunk
    from trajscope.warehouse import ingest_paths, load_chunks
    from trajscope.warehouse.lake import _catalog, write_warehouse

    monkeypatch.setenv("TRAJSCOPE_CACHE", str(tmp_path / "cache"))
    lake, db, corpus = tmp_path / "lake", tmp_path / "a.duckdb", tmp_path / "corpus.duckdb"
    ingest_paths(db, [logs["a"]], progress=False)
    export_lake(db, lake)
    first = lake_catalog(lake)
    with open_readonly(db) as con:
        golds = [c for c, in con.execute("SELECT DISTINCT chunk_id FROM gold_evidence_facts").fetchall()]
    # A writer of no run, only passages: the titles of gold passages the stored trajectories already name.
    load_chunks(corpus, [Chunk(chunk_id=c, text=f"river mill {c}", title=f"Title {c}") for c in golds], "synthetic")
    from trajscope.warehouse import open_warehouse

    with open_warehouse(corpus) as con:
        write_warehouse(con, lake)
    recomputed: list[str] = []
    real_recompute = _catalog.recompute_facts
    monkeypatch.setattr(_catalog, "recompute_facts",
                        lambda con, d: (recomputed.append(d.table), real_recompute(con, d)))
    second = lake_catalog(lake)
    assert recomputed == [] and _trajectory_count(second) == 60
    # the titles changed them
    assert rows_of(second, "evidence_funnel_facts") != rows_of(first, "evidence_funnel_facts")
    monkeypatch.setenv("TRAJSCOPE_CACHE", str(tmp_path / "cache-whole"))
    whole = lake_catalog(lake)
    for table in ("evidence_funnel_facts", "trajectory_funnel_facts", "judgment_score_facts", "trajectory_signals"):
        assert rows_of(second, table) == rows_of(whole, table), table
    # A shared table the refresh does not follow makes the next snapshot compute every trajectory's facts.
    monkeypatch.setenv("TRAJSCOPE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(_catalog, "_FOLLOWED_SHARED", ("questions",))
    with open_warehouse(corpus) as con:
        con.execute("UPDATE chunks SET text = text || ' (again)'")
        write_warehouse(con, lake)
    recomputed.clear()
    lake_catalog(lake)
    assert len(recomputed) == 4
