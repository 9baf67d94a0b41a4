"""Ingest is lossless, idempotent and atomic; migrations are versioned."""
import json
from pathlib import Path

import pytest
from foundation_records import fixture_trajectories

import trajscope.warehouse as warehouse
from trajscope.format import FinalStep, RecordError, encode, write_jsonl
from trajscope.warehouse import _loader, ingest_paths, ingest_trajectories, open_readonly, read_trajectory

TABLES = ("runs", "questions", "trajectories", "steps", "candidates", "reads", "register_events", "judgments")


def counts(db):
    with open_readonly(db) as con:
        return {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}


def write_log(path, trajectories):
    with open(path, "wb") as fh:
        write_jsonl(trajectories, fh)
    return path


def test_counts_match_the_records(tmp_path):
    db = tmp_path / "w.duckdb"
    trajs = fixture_trajectories()
    report = ingest_paths(db, [write_log(tmp_path / "a.jsonl", trajs)])
    assert (report.new, report.replaced, report.unchanged) == (4, 0, 0)
    c = counts(db)
    assert c["trajectories"] == 4 and c["runs"] == 2 and c["questions"] == 3
    assert c["steps"] == sum(len(t.steps) for t in trajs)
    assert c["candidates"] == sum(len(getattr(s, "candidates", [])) for t in trajs for s in t.steps)
    assert c["reads"] == sum(len(getattr(s, "passages", [])) for t in trajs for s in t.steps)
    assert c["register_events"] == 1
    assert c["judgments"] == sum(len(t.judgments) for t in trajs)


def test_ingest_is_lossless(tmp_path):
    db = tmp_path / "w.duckdb"
    trajs = fixture_trajectories()
    ingest_trajectories(db, trajs)
    with open_readonly(db) as con:
        for t in trajs:
            assert read_trajectory(con, t.trajectory_id) == t


def test_reingest_adds_nothing(tmp_path):
    db = tmp_path / "w.duckdb"
    log = write_log(tmp_path / "a.jsonl", fixture_trajectories())
    ingest_paths(db, [log])
    before = counts(db)
    report = ingest_paths(db, [log])
    assert (report.new, report.replaced, report.unchanged) == (0, 0, 4)
    assert counts(db) == before


def test_changed_record_replaces_the_old_one_entirely(tmp_path):
    db = tmp_path / "w.duckdb"
    trajs = fixture_trajectories()
    ingest_trajectories(db, trajs)
    before = counts(db)
    changed = trajs[0]
    changed.steps = [FinalStep(answer="Rome")]
    changed.final_answer = "Rome"
    changed.judgments = []
    changed.register_events = []
    report = ingest_trajectories(db, [changed])
    assert (report.new, report.replaced) == (0, 1)
    after = counts(db)
    assert after["trajectories"] == before["trajectories"]
    assert after["steps"] == before["steps"] - 3
    assert after["candidates"] == before["candidates"] - 3
    assert after["judgments"] == before["judgments"] - 4
    assert after["register_events"] == 0
    with open_readonly(db) as con:
        assert read_trajectory(con, changed.trajectory_id) == changed


def test_duplicate_ids_with_different_content_are_refused_naming_both_lines(tmp_path):
    db = tmp_path / "w.duckdb"
    first, other, second = fixture_trajectories()[0], fixture_trajectories()[1], fixture_trajectories()[0]
    second.final_answer = "second"
    log = write_log(tmp_path / "d.jsonl", [first, other, second])
    with pytest.raises(RecordError) as info:
        ingest_paths(db, [log])
    assert (info.value.line, info.value.field) == (3, "trajectory_id")
    assert "lines 1 and 3" in str(info.value) and "--on-duplicate" in str(info.value)
    assert not db.exists()


@pytest.mark.parametrize("keep, answer", [("last", "second"), ("first", None)])
def test_on_duplicate_keeps_the_copy_asked_for(tmp_path, keep, answer):
    db = tmp_path / "w.duckdb"
    first, second = fixture_trajectories()[0], fixture_trajectories()[0]
    second.final_answer = "second"
    report = ingest_paths(db, [write_log(tmp_path / "d.jsonl", [first, second])], on_duplicate=keep)
    assert (report.new, report.records, report.differing_duplicates) == (1, 1 if keep == "first" else 2, 1)
    assert f"kept the {keep} copy" in report.summary()
    with open_readonly(db) as con:
        assert con.execute("SELECT final_answer FROM trajectories").fetchall() == [(answer or first.final_answer,)]


def test_identical_duplicate_lines_are_counted_and_loaded_once(tmp_path):
    db = tmp_path / "w.duckdb"
    trajs = fixture_trajectories()
    report = ingest_paths(db, [write_log(tmp_path / "d.jsonl", [trajs[0], trajs[1], trajs[0], trajs[0]])])
    assert (report.new, report.records, report.identical_duplicates) == (2, 2, 2)
    assert "2 identical duplicate line(s) counted once" in report.summary()
    assert counts(db)["trajectories"] == 2


def test_an_empty_trajectory_id_is_refused(tmp_path):
    db = tmp_path / "w.duckdb"
    trajs = fixture_trajectories()
    trajs[1].trajectory_id = "  "
    with pytest.raises(RecordError) as info:
        ingest_paths(db, [write_log(tmp_path / "e.jsonl", trajs)])
    assert (info.value.line, info.value.field) == (2, "trajectory_id") and "empty trajectory id" in str(info.value)


def test_bad_record_in_the_middle_changes_nothing(tmp_path):
    db = tmp_path / "w.duckdb"
    ingest_trajectories(db, fixture_trajectories()[:1])
    before = counts(db)
    lines = [json.loads(encode(t)) for t in fixture_trajectories()]
    lines[2]["steps"][1]["passages"][0]["is_new"] = "maybe"
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(json.dumps(d) for d in lines) + "\n")
    with pytest.raises(RecordError) as info:
        ingest_paths(db, [write_log(tmp_path / "ok.jsonl", fixture_trajectories()[3:]), bad])
    assert info.value.line == 3 and info.value.field == "steps[1].passages[0].is_new"
    assert counts(db) == before


def test_failure_during_load_rolls_back(tmp_path, monkeypatch):
    db = tmp_path / "w.duckdb"
    ingest_trajectories(db, fixture_trajectories()[:2])
    before = counts(db)
    statements = _loader._load_sql() + (("99_broken.sql", "SELECT no_such_column FROM stage"),)
    monkeypatch.setattr(_loader, "_load_sql", lambda: statements)
    with pytest.raises(RuntimeError, match="warehouse/load/99_broken.sql"):
        ingest_trajectories(db, fixture_trajectories())
    assert counts(db) == before


def test_schema_version_and_views_installed(tmp_path):
    db = tmp_path / "w.duckdb"
    ingest_trajectories(db, fixture_trajectories()[:1])
    with open_readonly(db) as con:
        assert warehouse.schema_version(con) == warehouse.latest_schema_version()
        names = {r[0] for r in con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()}
    assert {v.name for v in warehouse.load_views()} <= names


def test_readonly_refuses_missing_file(tmp_path):
    with pytest.raises(warehouse.WarehouseMissing, match="trajscope ingest"):
        with open_readonly(tmp_path / "none.duckdb"):
            pass


def test_sandbox_refuses_writes_and_files(tmp_path):
    import duckdb

    db = tmp_path / "w.duckdb"
    ingest_trajectories(db, fixture_trajectories()[:1])
    forbidden = [
        "INSERT INTO runs (run_id) VALUES ('x')",
        f"COPY runs TO '{tmp_path}/out.csv'",
        f"ATTACH '{tmp_path}/other.duckdb' AS o",
        "INSTALL httpfs",
        "LOAD httpfs",
        "SELECT * FROM read_csv('/etc/passwd')",
        "SELECT * FROM read_text('/etc/hostname')",
        "SELECT * FROM glob('/etc/*')",
        "SET enable_external_access = true",
    ]
    with open_readonly(db) as con:
        for sql in forbidden:
            with pytest.raises(duckdb.Error):
                con.execute(sql).fetchall()


def test_small_batches_give_the_same_warehouse(tmp_path, monkeypatch):
    trajs = fixture_trajectories()
    twice = trajs + [fixture_trajectories()[0]]  # a repeated id across batches keeps the last copy
    twice[-1].final_answer = "last copy"
    log = write_log(tmp_path / "a.jsonl", twice)
    whole = tmp_path / "whole.duckdb"
    ingest_paths(whole, [log], on_duplicate="last")
    monkeypatch.setattr(_loader, "_BATCH_BYTES", 600)  # one or two records per batch
    manifest = _loader.validate_log(log, workdir=tmp_path, on_duplicate="last")
    assert len(manifest.batches) >= 3
    batched = tmp_path / "batched.duckdb"
    report = ingest_paths(batched, [log], on_duplicate="last")
    assert report.new == 4 and report.records == 5
    assert counts(batched) == counts(whole)
    with open_readonly(batched) as con:
        assert read_trajectory(con, trajs[0].trajectory_id).final_answer == "last copy"
        for t in trajs[1:]:
            assert read_trajectory(con, t.trajectory_id) == t


def _roll_back_to_version_3(db) -> None:
    """A warehouse at schema version 3: no migration 0004 (cached calls), 0005 (capabilities) or 0007 (gold
    paragraphs), views of that time."""
    import duckdb

    with duckdb.connect(str(db)) as con:
        for (view,) in con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall():
            con.execute(f"DROP VIEW {view}")
        con.execute("ALTER TABLE steps DROP COLUMN cached")
        con.execute("ALTER TABLE steps DROP COLUMN source_ref")  # and no migration 0013 (human labels)
        con.execute("ALTER TABLE steps DROP COLUMN agent")
        con.execute("DROP TABLE human_step_labels")
        con.execute("DROP TABLE step_attribution_rows")
        con.execute("ALTER TABLE questions DROP COLUMN gold_paragraphs")
        con.execute("ALTER TABLE trajectories DROP COLUMN cached_calls")
        con.execute("ALTER TABLE trajectories DROP COLUMN cached_cost_usd")
        for column in ("cap_search_candidates", "cap_snippets", "cap_read_action", "cap_gold_answers",
                       "cap_gold_passages", "cap_judgments", "capabilities_declared", "capability_reasons"):
            con.execute(f"ALTER TABLE runs DROP COLUMN {column}")
        for column in ("failed_read_count", "n_candidates", "n_snippets", "n_search_observations",
                       "n_record_judgments"):
            con.execute(f"ALTER TABLE trajectories DROP COLUMN {column}")
        # At version 3 every read step counted, passage or not.
        con.execute("UPDATE trajectories t SET read_count = (SELECT count(*) FROM steps s "
                    "WHERE s.trajectory_id = t.trajectory_id AND s.kind = 'read')")
        con.execute("DELETE FROM schema_migrations WHERE version >= 4")
        con.execute("UPDATE views_state SET views_hash = 'session-1'")


def test_upgrade_brings_an_older_warehouse_up_to_date_and_keeps_its_rows(tmp_path):
    db = tmp_path / "w.duckdb"
    ingest_trajectories(db, fixture_trajectories())
    facts = "SELECT trajectory_id, read_count, failed_read_count FROM trajectory_facts ORDER BY 1"
    profile = "SELECT * FROM run_capabilities ORDER BY run_id"
    with open_readonly(db) as con:
        fresh_facts, fresh_profile = con.execute(facts).fetchall(), con.execute(profile).fetchall()
    _roll_back_to_version_3(db)
    assert warehouse.upgrade_if_warehouse(db) == "upgraded"
    with open_readonly(db) as con:
        # The newest migration file's number, so a new migration does not need this test edited.
        newest = max(int(f.name[:4]) for f in (Path(warehouse.__file__).parent / "migrations").glob("*.sql"))
        assert warehouse.schema_version(con) == warehouse.latest_schema_version() == newest
        rows = con.execute("SELECT run_id, n_trajectories, cached_calls FROM run_summary ORDER BY 1").fetchall()
        # Migration 0005 backfills the read rule and the facts the capability inference reads.
        assert con.execute(facts).fetchall() == fresh_facts
        assert con.execute(profile).fetchall() == fresh_profile
    # Rows loaded before the migration do not know which calls were cached: NULL, not 0.
    assert rows == [("run_a", 3, None), ("run_b", 1, None)]
    assert warehouse.upgrade_if_warehouse(db) == "current"


def test_upgrade_leaves_a_file_that_is_not_a_warehouse_untouched(tmp_path):
    import duckdb

    other = tmp_path / "other.duckdb"
    with duckdb.connect(str(other)) as con:
        con.execute("CREATE TABLE notes (x INTEGER)")
    assert warehouse.upgrade_if_warehouse(other) == "not a warehouse"
    with duckdb.connect(str(other), read_only=True) as con:
        assert [r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()] == ["notes"]
    (tmp_path / "junk.duckdb").write_text("not a database")
    assert warehouse.upgrade_if_warehouse(tmp_path / "junk.duckdb") == "not a warehouse"


def test_a_bad_line_after_batches_were_loaded_rolls_everything_back(tmp_path, monkeypatch):
    # Validation runs one batch ahead of loading, so earlier batches are already in the transaction.
    db = tmp_path / "w.duckdb"
    ingest_trajectories(db, fixture_trajectories()[:1])
    before = counts(db)
    lines = [encode(t).decode() for t in fixture_trajectories()] * 3
    lines.append('{"trajectory_id": "broken"}')
    bad = tmp_path / "late.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    monkeypatch.setattr(_loader, "_BATCH_BYTES", 600)  # one or two records per batch
    with pytest.raises(RecordError) as info:
        ingest_paths(db, [bad])
    assert info.value.line == 13
    assert counts(db) == before


def test_a_failed_ingest_into_a_new_warehouse_leaves_no_file(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"trajectory_id": "x"}\n')
    db = tmp_path / "new.duckdb"
    with pytest.raises(RecordError):
        ingest_paths(db, [bad])
    with pytest.raises(RecordError, match="file not found"):
        ingest_paths(db, [tmp_path / "missing.jsonl"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.jsonl"]


def test_report_counts_each_id_once_against_the_warehouse_before_the_call(tmp_path, monkeypatch):
    monkeypatch.setattr(_loader, "_BATCH_BYTES", 600)
    trajs = fixture_trajectories()
    again = fixture_trajectories()[0]
    again.final_answer = "last copy"
    log = write_log(tmp_path / "a.jsonl", [*trajs, again])  # the repeat lands in a later batch
    db = tmp_path / "w.duckdb"
    first = ingest_paths(db, [log], on_duplicate="last")
    assert (first.records, first.new, first.replaced, first.unchanged) == (5, 4, 0, 0)
    second = ingest_paths(db, [log], on_duplicate="last")
    # The earlier copy of the repeated id differs from what is stored, but the last copy does not.
    assert (second.new, second.replaced, second.unchanged) == (0, 0, 4)
    with open_readonly(db) as con:
        assert read_trajectory(con, again.trajectory_id).final_answer == "last copy"


def test_a_new_warehouse_is_built_beside_its_path_and_committed_batch_by_batch(tmp_path, monkeypatch):
    # One transaction for a whole new file kept every batch's staging until the commit (2 GB at 1M); a new file
    # now commits each batch into a side file, which takes the warehouse's name only once complete.
    monkeypatch.setattr(_loader, "_BATCH_BYTES", 600)  # one or two records per batch
    trajs = fixture_trajectories()
    log = write_log(tmp_path / "a.jsonl", trajs)
    db = tmp_path / "new.duckdb"
    seen = []
    load_batch = _loader._load_batch

    def observing(con, batch, *args, **kwargs):
        sides = [p.name for p in tmp_path.glob(".trajscope-ingest-*") if p.suffix != ".wal"]
        with con.cursor() as other:  # its own transaction: sees only what was committed
            committed = other.execute("SELECT count(*) FROM trajectories").fetchone()[0]
        seen.append((db.exists(), sides, committed, len(batch.ids)))
        load_batch(con, batch, *args, **kwargs)

    monkeypatch.setattr(_loader, "_load_batch", observing)
    report = ingest_paths(db, [log])
    assert report.new == len(trajs) and len(seen) >= 3
    assert not any(exists for exists, _, _, _ in seen)  # no warehouse under its name until it is complete
    assert all(len(sides) == 1 and sides[0].endswith(".duckdb") for _, sides, _, _ in seen)
    loaded = [n for *_, n in seen]
    assert [c for _, _, c, _ in seen] == [sum(loaded[:i]) for i in range(len(seen))]  # each batch was committed
    assert not list(tmp_path.glob(".trajscope-ingest-*"))
    with open_readonly(db) as con:
        for t in trajs:
            assert read_trajectory(con, t.trajectory_id) == t


def test_a_warehouse_another_ingest_created_meanwhile_is_loaded_into_not_replaced(tmp_path, monkeypatch):
    first, *rest = fixture_trajectories()
    other_log = write_log(tmp_path / "other.jsonl", [first])
    log = write_log(tmp_path / "a.jsonl", rest)
    db = tmp_path / "new.duckdb"
    load_batch = _loader._load_batch
    calls = []

    def racing(con, batch, *args, **kwargs):
        if not calls:  # another ingest creates the warehouse while this one builds its side file
            calls.append(batch)
            ingest_paths(db, [other_log])
        load_batch(con, batch, *args, **kwargs)

    monkeypatch.setattr(_loader, "_load_batch", racing)
    report = ingest_paths(db, [log])
    assert report.new == len(rest)
    with open_readonly(db) as con:
        ids = {r[0] for r in con.execute("SELECT trajectory_id FROM trajectories").fetchall()}
    assert ids == {t.trajectory_id for t in [first, *rest]}
    assert not list(tmp_path.glob(".trajscope-ingest-*"))
