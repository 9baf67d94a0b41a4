"""A batch's derived facts read the batch's own rows: no stored step, judgment, gold fact, trajectory or fact of an
earlier batch is scanned again, so a batch costs the same however much the warehouse holds."""
import json

from bench.synthetic import write_synthetic_log
from trajscope.warehouse import _loader, ingest_paths, open_readonly

# The stored tables a refresh filtered by a semi-join on their string id would scan in full (no row group skipped):
# the batch's own rows, and the facts later facts are computed from.
BATCH_TABLES = ("steps", "judgments", "gold_evidence_facts", "trajectories", "evidence_funnel_facts",
                "judgment_score_facts")
DERIVED_INSERTS = ("INSERT INTO evidence_funnel_facts", "INSERT INTO trajectory_funnel_facts",
                   "INSERT INTO judgment_score_facts", "INSERT INTO trajectory_signals")


def _scans(node, out: dict[str, int]) -> None:
    """Rows each table scan of a DuckDB JSON profile read, by table (<database>.<schema>.<table>; temp.main.* for
    the batch's staging)."""
    if node.get("type") == "TABLE_SCAN":
        table = node.get("extra_info", {}).get("Table", "")
        out[table] = out.get(table, 0) + int(node.get("rows_scanned", 0))
    for child in node.get("children", []) + node.get("operator", []):
        _scans(child, out)


class _Profiled:
    """A connection that profiles each derived-fact insert and keeps the rows it scanned per table."""

    def __init__(self, con, profile, scans: list[dict[str, int]]):
        self._con, self._profile, self._scans = con, profile, scans

    def execute(self, sql, *args, **kwargs):
        if not any(insert in sql for insert in DERIVED_INSERTS):
            return self._con.execute(sql, *args, **kwargs)
        self._con.execute("PRAGMA enable_profiling = 'json'")
        self._con.execute(f"PRAGMA profiling_output = '{self._profile}'")
        try:
            result = self._con.execute(sql, *args, **kwargs)
        finally:
            self._con.execute("PRAGMA disable_profiling")
        out: dict[str, int] = {}
        _scans(json.loads(self._profile.read_text()), out)  # the file's last statement: the insert
        self._scans[-1].update({t: self._scans[-1].get(t, 0) + n for t, n in out.items()})
        return result

    def __getattr__(self, name):
        return getattr(self._con, name)


def test_a_later_batchs_facts_scan_no_stored_row_of_an_earlier_batch(tmp_path, monkeypatch):
    log, db, profile = tmp_path / "s.jsonl", tmp_path / "w.duckdb", tmp_path / "profile.json"
    write_synthetic_log(log, 200, seed=5)
    size = log.stat().st_size
    monkeypatch.setattr(_loader, "_BATCH_BYTES", size // 4)  # four or five batches
    scans: list[dict[str, int]] = []
    load_batch = _loader._load_batch

    def profiled(con, *args, **kwargs):
        scans.append({})
        return load_batch(_Profiled(con, profile, scans), *args, **kwargs)

    monkeypatch.setattr(_loader, "_load_batch", profiled)
    ingest_paths(db, [log], progress=False)

    lines = log.read_bytes().splitlines()
    assert len(scans) >= 4
    for i, batch in enumerate(scans):
        stored = {t.split(".")[-1]: n for t, n in batch.items() if not t.startswith("temp.") and n}
        assert not stored.keys() & set(BATCH_TABLES), (i, stored)
    # The facts are there for every record, computed from the staged rows.
    with open_readonly(db) as con:
        signals, funnels = con.execute(
            "SELECT (SELECT count(*) FROM trajectory_signals), (SELECT count(*) FROM trajectory_funnel_facts)"
        ).fetchone()
    assert signals == funnels == len(lines)


FACT_TABLES = ("evidence_funnel_facts", "trajectory_funnel_facts", "judgment_score_facts", "trajectory_signals")


class _DeletesProfiled:
    """A connection that runs each fact fill's opening DELETE on its own, profiled, keeping the rows it scanned."""

    def __init__(self, con, profile, deletes: list[dict[str, int]]):
        self._con, self._profile, self._deletes = con, profile, deletes

    def execute(self, sql, *args, **kwargs):
        if not any(sql.lstrip("-").split("\n", 1)[-1].startswith(f"DELETE FROM {t} ") for t in FACT_TABLES):
            return self._con.execute(sql, *args, **kwargs)
        delete, rest = sql.split(";\n", 1)  # a fill opens with its DELETE (warehouse._fact_units checks it)
        self._con.execute("PRAGMA enable_profiling = 'json'")
        self._con.execute(f"PRAGMA profiling_output = '{self._profile}'")
        try:
            self._con.execute(delete)
        finally:
            self._con.execute("PRAGMA disable_profiling")
        out: dict[str, int] = {}
        _scans(json.loads(self._profile.read_text()), out)
        self._deletes[-1].update({t.split(".")[-1]: n for t, n in out.items() if not t.startswith("temp.")})
        return self._con.execute(rest, *args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._con, name)


_loader_batch = _loader._load_batch


def _batch_deletes(tmp_path, monkeypatch, log, db) -> list[dict[str, int]]:
    deletes: list[dict[str, int]] = []

    def profiled(con, *args, **kwargs):
        deletes.append({})
        return _loader_batch(_DeletesProfiled(con, tmp_path / "profile.json", deletes), *args, **kwargs)

    monkeypatch.setattr(_loader, "_load_batch", profiled)
    ingest_paths(db, [log], progress=False)
    return deletes


def test_a_batch_of_new_trajectories_deletes_no_stored_fact_and_a_changed_one_replaces_its_facts(tmp_path, monkeypatch):
    log, db = tmp_path / "s.jsonl", tmp_path / "w.duckdb"
    write_synthetic_log(log, 200, seed=5)
    monkeypatch.setattr(_loader, "_BATCH_BYTES", log.stat().st_size // 4)
    deletes = _batch_deletes(tmp_path, monkeypatch, log, db)
    assert len(deletes) >= 4
    # Every batch's trajectories are new: no fill's delete reads a stored fact row (batch 0 finds none to read).
    assert all(not any(batch.values()) for batch in deletes), deletes

    # The same log with a changed record per batch: the changed trajectories' facts are replaced, not doubled.
    lines = log.read_bytes().splitlines()
    changed = {0, len(lines) // 2, len(lines) - 1}
    edited = [json.loads(line) for line in lines]
    for i in changed:
        edited[i]["steps"] = edited[i]["steps"][:1]  # one step left: its funnel and signals change
    log.write_text("".join(json.dumps(r) + "\n" for r in edited))
    deletes = _batch_deletes(tmp_path, monkeypatch, log, db)
    assert any(any(batch.values()) for batch in deletes), deletes  # the stored facts were looked up to be replaced
    # The replaced facts are those a fresh ingest of the edited log computes, row for row.
    fresh = tmp_path / "fresh.duckdb"
    monkeypatch.setattr(_loader, "_load_batch", _loader_batch)
    ingest_paths(fresh, [log], progress=False)
    for table in FACT_TABLES:
        rows = []
        for path in (db, fresh):
            with open_readonly(path) as con:
                rows.append(con.execute(f"SELECT * FROM {table} ORDER BY ALL").fetchall())
        assert len(rows[0]) >= len(lines) and rows[0] == rows[1], table


class _Statements:
    """A connection that keeps the text of every statement a batch's load runs."""

    def __init__(self, con, seen: list[str]):
        self._con, self._seen = con, seen

    def execute(self, sql, *args, **kwargs):
        self._seen.append(sql)
        return self._con.execute(sql, *args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._con, name)


def test_a_new_warehouses_batches_look_up_no_stored_hash_unless_an_id_repeats(tmp_path, monkeypatch):
    log, db = tmp_path / "s.jsonl", tmp_path / "w.duckdb"
    write_synthetic_log(log, 200, seed=5)
    monkeypatch.setattr(_loader, "_BATCH_BYTES", log.stat().st_size // 4)
    seen: list[list[str]] = []

    def watched(con, *args, **kwargs):
        seen.append([])
        return _loader_batch(_Statements(con, seen[-1]), *args, **kwargs)

    monkeypatch.setattr(_loader, "_load_batch", watched)
    lookup = "LEFT JOIN trajectories t USING (trajectory_id)"
    first = ingest_paths(db, [log], progress=False)
    assert len(seen) >= 4 and first.new == len(log.read_bytes().splitlines())
    # Every id is new to an empty warehouse: no batch joins its ids to the trajectories earlier batches stored.
    assert not any(lookup in sql for batch in seen for sql in batch)
    seen.clear()
    edited = [json.loads(line) for line in log.read_bytes().splitlines()]
    for record in edited:  # the same ids, each record changed
        record.setdefault("metadata", {})["note"] = "edited"
    log.write_text("".join(json.dumps(r) + "\n" for r in edited))
    again = ingest_paths(db, [log], progress=False)  # now stored: each batch's ids are looked up
    assert (again.new, again.replaced) == (0, first.new)
    assert sum(any(lookup in sql for sql in batch) for batch in seen) >= 4
