"""Gold nobody overwrites, and ingests that fail or die leave the warehouse file and the temp dir as they were."""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from fixtures.forensics.builders import final, read, search, trajectory

from trajscope.format import RecordError, Run, write_jsonl
from trajscope.warehouse import GoldConflict, _loader, ingest_paths, open_readonly, remove_stale_batch_dirs

BLOCK = 256 * 1024  # DuckDB's block size


def _metadata_bound(db: Path) -> int:
    """Bytes a checkpoint may leave: one fresh copy of the catalog's metadata blocks (the view SQL lives there)."""
    with open_readonly(db) as con:
        blocks = con.execute("SELECT count(*) FROM pragma_metadata_info()").fetchone()[0]
    return BLOCK * max(1, blocks)
TABLES = ("runs", "questions", "trajectories", "steps", "candidates", "reads", "judgments")
Q = "Where was Scott Derrickson born?"
G1 = ("hp-g1", "Scott Derrickson was born in Denver, Colorado.")


def _log(path: Path, run_id: str, gold: str, *, qids=("q1", "q2"), dataset=None, aliases=()) -> Path:
    run = Run(run_id=run_id, dataset=dataset)
    records = []
    for qid in qids:
        t = trajectory(run, qid, Q, gold, [search(G1), read(G1), final("Denver")], gold_chunks=(G1[0],))
        t.question.dataset = dataset
        t.question.aliases = list(aliases)
        records.append(t)
    with open(path, "wb") as fh:
        write_jsonl(records, fh)
    return path


def _state(db: Path) -> tuple:
    with open_readonly(db) as con:
        counts = {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}
        golds = con.execute("SELECT dataset, question_id, gold_answer FROM questions ORDER BY ALL").fetchall()
    return counts, golds


def test_conflicting_gold_across_runs_is_refused_naming_both_sources(tmp_path):
    db = tmp_path / "w.duckdb"
    first = _log(tmp_path / "first.jsonl", "run_one", "Denver")
    ingest_paths(db, [first])
    before, size, slack = _state(db), db.stat().st_size, _metadata_bound(db)
    second = _log(tmp_path / "second.jsonl", "run_two", "Boulder")
    with pytest.raises(GoldConflict) as info:
        ingest_paths(db, [second])
    text = str(info.value)
    assert "conflicting gold_answer" in text and "'Boulder' in run(s) run_two" in text
    assert "'Denver' in run(s) run_one" in text
    assert str(first) in text and str(second) in text and "--per-run-questions" in text
    assert "1 more question(s) conflict too" in text
    assert _state(db) == before and db.stat().st_size <= size + slack  # the warehouse is as it was


def test_two_files_of_one_ingest_that_disagree_are_refused_too(tmp_path):
    db = tmp_path / "w.duckdb"
    a = _log(tmp_path / "a.jsonl", "run_a", "Denver", qids=("q1",))
    b = _log(tmp_path / "b.jsonl", "run_b", "Denver", qids=("q1",), aliases=("Denver, CO",))
    with pytest.raises(GoldConflict, match="conflicting aliases"):
        ingest_paths(db, [a, b])
    assert not db.exists()


def test_identical_gold_is_shared_and_a_run_may_correct_its_own(tmp_path):
    db = tmp_path / "w.duckdb"
    ingest_paths(db, [_log(tmp_path / "a.jsonl", "run_a", "Denver"), _log(tmp_path / "b.jsonl", "run_b", "Denver")])
    counts, golds = _state(db)
    assert counts["questions"] == 2 and counts["trajectories"] == 4
    # Re-ingesting run_a alone with a corrected gold would change run_b's question: refused.
    with pytest.raises(GoldConflict):
        ingest_paths(db, [_log(tmp_path / "a2.jsonl", "run_a", "Denver, Colorado")])
    # A run nobody else shares a question with may correct its own.
    ingest_paths(db, [_log(tmp_path / "c.jsonl", "run_c", "X", qids=("q9",))])
    ingest_paths(db, [_log(tmp_path / "c2.jsonl", "run_c", "Y", qids=("q9",))])
    assert ("", "q9", "Y") in _state(db)[1]


def test_the_full_conflict_check_runs_only_for_keys_the_cheap_pass_finds(tmp_path, monkeypatch):
    # The full check joins every stored trajectory; a batch that restates its questions as stored skips it.
    asked = []
    named = _loader._named_sql
    monkeypatch.setattr(_loader, "_named_sql", lambda name: (asked.append(name), named(name))[1])
    db = tmp_path / "w.duckdb"
    ingest_paths(db, [_log(tmp_path / "a.jsonl", "run_a", "Denver")])
    ingest_paths(db, [_log(tmp_path / "b.jsonl", "run_b", "Denver")])
    assert asked.count("question_conflict_keys.sql") == 2 and "check_question_conflicts.sql" not in asked
    with pytest.raises(GoldConflict, match="conflicting gold_answer"):
        ingest_paths(db, [_log(tmp_path / "c.jsonl", "run_c", "Boulder")])
    assert "check_question_conflicts.sql" in asked


def test_a_stored_question_no_trajectory_uses_is_a_candidate_but_no_conflict(tmp_path, monkeypatch):
    from trajscope.format import Question
    from trajscope.warehouse import load_questions

    db = tmp_path / "w.duckdb"
    ingest_paths(db, [_log(tmp_path / "a.jsonl", "run_a", "Denver", qids=("q1",))])
    load_questions(db, [Question(question_id="q7", text=Q, gold_answer="Boulder")], "")
    asked = []
    named = _loader._named_sql
    monkeypatch.setattr(_loader, "_named_sql", lambda name: (asked.append(name), named(name))[1])
    ingest_paths(db, [_log(tmp_path / "b.jsonl", "run_b", "Denver", qids=("q7",))])
    assert "check_question_conflicts.sql" in asked  # the cheap pass flagged it; the full check cleared it
    assert ("", "q7", "Denver") in _state(db)[1]


def test_per_run_questions_keep_disagreeing_runs_apart(tmp_path):
    db = tmp_path / "w.duckdb"
    ingest_paths(db, [_log(tmp_path / "a.jsonl", "run_a", "Denver")], per_run_questions=True)
    ingest_paths(db, [_log(tmp_path / "b.jsonl", "run_b", "Boulder", dataset="hotpot")], per_run_questions=True)
    counts, golds = _state(db)
    assert golds == [("hotpot/run:run_b", "q1", "Boulder"), ("hotpot/run:run_b", "q2", "Boulder"),
                     ("run:run_a", "q1", "Denver"), ("run:run_a", "q2", "Denver")]
    with open_readonly(db) as con:
        from trajscope.warehouse import read_trajectory

        assert read_trajectory(con, "run_b::q1").question.dataset == "hotpot"  # the record is unchanged
        assert read_trajectory(con, "run_a::q1").question.gold_answer == "Denver"


def _big_log(path: Path, run_id: str, n: int) -> Path:
    run = Run(run_id=run_id, dataset="fx")
    pad = "x" * 2000
    records = [trajectory(run, f"q{i}", Q + pad, "Denver", [search(G1), read(G1), final("Denver")],
                          gold_chunks=(G1[0],)) for i in range(n)]
    with open(path, "wb") as fh:
        write_jsonl(records, fh)
    return path


def _sha256(db: Path) -> str:
    return hashlib.sha256(db.read_bytes()).hexdigest()


def test_a_failed_ingest_leaves_the_warehouse_files_bytes(tmp_path, monkeypatch):
    db = tmp_path / "w.duckdb"
    ingest_paths(db, [_big_log(tmp_path / "small.jsonl", "small", 5)])
    digest, state = _sha256(db), _state(db)
    big = _big_log(tmp_path / "big.jsonl", "big", 600)
    with open(big, "ab") as fh:
        fh.write(b'{"trajectory_id": "broken"}\n')
    monkeypatch.setattr(_loader, "_BATCH_BYTES", 256 * 1024)  # several batches load before the bad line
    for _ in range(2):
        with pytest.raises(RecordError) as info:
            ingest_paths(db, [big])
        assert info.value.line == 601
        assert _state(db) == state and _sha256(db) == digest


@pytest.mark.parametrize("settings", ["writer", "duckdb_defaults"])
def test_a_rolled_back_large_load_writes_nothing_into_the_file(tmp_path, settings):
    # Large enough that DuckDB's defaults write whole row groups into the file before the commit; the
    # writer's settings keep them out of it until the commit, so a rollback leaves the bytes.
    from trajscope.warehouse import open_warehouse
    from trajscope.warehouse._connection import WRITE_CONFIG

    db = tmp_path / "w.duckdb"
    ingest_paths(db, [_log(tmp_path / "a.jsonl", "run_a", "Denver")])
    digest, size = _sha256(db), db.stat().st_size
    with open_warehouse(db) as con:
        if settings == "duckdb_defaults":
            assert {"enable_optimistic_write", "auto_checkpoint_skip_wal_threshold"} <= set(WRITE_CONFIG)
            con.execute("SET enable_optimistic_write = true")
            con.execute("SET auto_checkpoint_skip_wal_threshold = 100000")
        con.execute("BEGIN TRANSACTION")
        con.execute("INSERT INTO steps (trajectory_id, step_index, kind, observation) "
                    "SELECT 'x' || range, range, 'final', md5(range::VARCHAR) FROM range(400000)")
        con.execute("ROLLBACK")
        grown = db.stat().st_size
    if settings == "writer":
        assert grown == size and _sha256(db) == digest and _state(db)[0]["steps"] == 6
    else:  # what the issue saw: 6.3 MB -> 25.4 MB after a failed ingest
        assert grown > size + 8 * BLOCK


def test_batch_folders_of_a_killed_ingest_are_removed_by_the_next_one(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = tmp_path / f"trajscope-batches-{int(dead.stdout)}-abc"
    stale.mkdir()
    (stale / "log.jsonl.00000.jsonl").write_bytes(b"x" * 1000)
    alive = tmp_path / f"trajscope-batches-{os.getppid()}-def"  # a running process's folder stays
    alive.mkdir()
    db = tmp_path / "w.duckdb"
    ingest_paths(db, [_log(tmp_path / "a.jsonl", "run_a", "Denver")])
    assert not stale.exists() and alive.exists()
    assert [p.name for p in tmp_path.glob("trajscope-batches-*")] == [alive.name]
    assert remove_stale_batch_dirs(tmp_path) == []


def test_the_records_log_is_named_after_its_process_and_only_a_dead_ones_is_swept(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    seen = []

    def recording(db_path, paths, **kwargs):
        seen.extend(Path(p) for p in paths)
        assert all(Path(p).exists() for p in paths)
        return _loader.IngestReport(files=[str(p) for p in paths])

    monkeypatch.setattr(_loader, "ingest_paths", recording)
    _loader.ingest_trajectories(tmp_path / "w.duckdb", [])
    assert len(seen) == 1 and seen[0].name.startswith(f"trajscope-records-{os.getpid()}-")
    assert not seen[0].exists()  # removed when the ingest ends
    monkeypatch.undo()
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = tmp_path / f"trajscope-records-{int(dead.stdout)}-abc.jsonl"
    alive = tmp_path / f"trajscope-records-{os.getppid()}-def.jsonl"  # a running process's: kept
    mine = tmp_path / f"trajscope-records-{os.getpid()}-ghi.jsonl"  # this process's: kept
    unnamed = tmp_path / "trajscope-records-old.jsonl"  # not named after a process: not ours to judge
    for file in (stale, alive, mine, unnamed):
        file.write_bytes(b"x" * 100)
    assert remove_stale_batch_dirs(tmp_path) == [stale]
    assert not stale.exists() and alive.exists() and mine.exists() and unnamed.exists()


def test_a_killed_ingest_leaves_only_what_the_next_run_cleans(tmp_path):
    # A real kill -9 in the middle of a load: the next ingest removes its batch folder and the
    # warehouse holds none of the killed ingest's rows.
    db = tmp_path / "w.duckdb"
    big = _big_log(tmp_path / "big.jsonl", "big", 4000)
    env = {**os.environ, "TMPDIR": str(tmp_path), "PYTHONPATH": os.pathsep.join(sys.path)}
    script = ("import sys, warehouse._loader as L; L._BATCH_BYTES = 256 * 1024\n"
              "orig = L._load_batch\n"
              "def slow(*a, **k):\n    orig(*a, **k); print('loaded', flush=True); import time; time.sleep(30)\n"
              "L._load_batch = slow\n"
              f"L.ingest_paths({str(db)!r}, [{str(big)!r}])\n")
    proc = subprocess.Popen([sys.executable, "-c", script], env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "loaded"
        assert list(tmp_path.glob("trajscope-batches-*"))
    finally:
        proc.kill()
        proc.wait()
    # The killed ingest was building a new warehouse: nothing under its name, only its side file.
    assert not db.exists() and len([p for p in tmp_path.glob(".trajscope-ingest-*") if p.suffix == ".duckdb"]) == 1
    monkeypatch_tmp = tempfile.tempdir
    try:
        tempfile.tempdir = str(tmp_path)
        ingest_paths(db, [_log(tmp_path / "a.jsonl", "run_a", "Denver")])
    finally:
        tempfile.tempdir = monkeypatch_tmp
    assert not list(tmp_path.glob("trajscope-batches-*")) and not list(tmp_path.glob(".trajscope-ingest-*"))
    with open_readonly(db) as con:
        assert con.execute("SELECT DISTINCT run_id FROM trajectories").fetchall() == [("run_a",)]
    assert hashlib.blake2b(big.read_bytes()).hexdigest()  # the source log is untouched and readable
