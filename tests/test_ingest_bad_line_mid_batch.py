"""A bad line in the middle of one large batch: the one-line error names its file, line and field, nothing is written.

The mutations are ones DuckDB's typed read of the batch accepts (it casts or ignores them), so a load that left
validation to DuckDB would pass them silently; bench/ingest_vs_read_json.py --one-parse lists more.
"""
import json

import pytest
from foundation_records import fixture_trajectories

from trajscope.format import RecordError, decode_trajectory, encode
from trajscope.warehouse import ingest_paths, ingest_trajectories, open_readonly

LINES = 3000  # about 7 MB: one ingest batch (256 MB) holds them all
BAD_LINE = 1501


def _records() -> list[dict]:
    """LINES distinct, valid records: the fixture's four, renumbered."""
    base = [json.loads(encode(t)) for t in fixture_trajectories()]
    records = []
    for i in range(LINES):
        record = json.loads(json.dumps(base[i % len(base)]))
        record["trajectory_id"] = f"{record['trajectory_id']}#{i}"
        records.append(record)
    return records


def _write(path, records) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


def _counts(db) -> tuple[int, int, int]:
    with open_readonly(db) as con:
        return tuple(con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("trajectories", "steps", "runs"))


# (what, change to the record, the field the error names): the first step of every fixture record is a search.
MUTATIONS = [
    ("a float in an int field", lambda r: r["steps"][0].update(tokens_in=1.5), "steps[0].tokens_in"),
    ("a string in an int field", lambda r: r["steps"][0].update(tokens_in="7"), "steps[0].tokens_in"),
    ("a number in a string field", lambda r: r["steps"][0].update(query=5), "steps[0].query"),
    ("an unknown field in a step", lambda r: r["steps"][0].update(bogus=1), "steps[0].bogus"),
    ("a step kind the format lacks", lambda r: r["steps"][0].update(kind="dance"), "steps[0].kind"),
    ("a schema version the format lacks", lambda r: r.update(schema_version="2"), "schema_version"),
]


@pytest.mark.parametrize(("what", "change", "field"), MUTATIONS, ids=[m[0] for m in MUTATIONS])
def test_a_bad_line_mid_batch_is_named_and_changes_nothing(tmp_path, what, change, field):
    db = tmp_path / "w.duckdb"
    ingest_trajectories(db, fixture_trajectories()[:1])
    before = _counts(db)
    records = _records()
    change(records[BAD_LINE - 1])
    log = tmp_path / "large.jsonl"
    _write(log, records)
    with pytest.raises(RecordError) as info:
        ingest_paths(db, [log])
    err = info.value
    assert (err.path, err.line, err.field) == (str(log), BAD_LINE, field)
    message = str(err)
    assert "\n" not in message and message.startswith(f"{log}:{BAD_LINE}: field {field}: ")
    # The same words the line gets decoded alone (the format's own message for it).
    bad_line = log.read_text().splitlines()[BAD_LINE - 1]
    with pytest.raises(RecordError) as alone:
        decode_trajectory(bad_line, path=log, line=BAD_LINE)
    assert message == str(alone.value)
    assert _counts(db) == before


def test_a_bad_line_mid_batch_comes_before_a_later_duplicate_and_leaves_no_new_file(tmp_path):
    records = _records()
    records[BAD_LINE - 1]["steps"][0]["tokens_in"] = 1.5
    later = dict(records[0], final_answer="another answer")  # line 1's id again, other content, at the end
    log = tmp_path / "large.jsonl"
    _write(log, [*records, later])
    db = tmp_path / "new.duckdb"
    with pytest.raises(RecordError) as info:
        ingest_paths(db, [log])
    assert (info.value.line, info.value.field) == (BAD_LINE, "steps[0].tokens_in")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["large.jsonl"]
    # Without the bad line, the duplicate is what the same log is refused for.
    records[BAD_LINE - 1]["steps"][0]["tokens_in"] = 7
    _write(log, [*records, later])
    with pytest.raises(RecordError) as info:
        ingest_paths(db, [log])
    assert (info.value.line, info.value.field) == (LINES + 1, "trajectory_id")
    assert "duplicate id" in str(info.value)
