"""Audit records: strict JSONL import with file/line/field errors, and idempotent loading into the warehouse."""
from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
from click.testing import CliRunner

from trajscope.cli import main
from trajscope.engine.audit import AuditLog, AuditLogCorrupt, recover_audit_log
from trajscope.format import (
    AuditRecord,
    ReaderOutput,
    RecordError,
    decode_audit_record,
    encode_audit_record,
    read_audit_records,
)
from trajscope.warehouse import open_readonly
from trajscope.warehouse.audit import load_audit_files, load_audit_records

FIXTURES = Path(__file__).parent / "fixtures" / "audit"
BASE = '"audit_id": "a", "question_id": "q", "question": "Q?", "gold": "Paris"'


def _error(line: str) -> RecordError:
    with pytest.raises(RecordError) as info:
        decode_audit_record(line, path="f.jsonl", line=7)
    return info.value


def test_external_fixture_decodes_to_the_exact_records():
    records = read_audit_records(FIXTURES / "external_records.jsonl")
    assert records == [
        AuditRecord(
            audit_id="ext-pipeline", cell="X1", dataset="mini", question_id="e1", question="Who directed Alien?",
            gold="Ridley Scott", reader_model="my-reader", compiler_a="big-a", compiler_b="big-b",
            contexts={"b1": "Alien (1979) was directed by Ridley Scott.",
                      "b2": "Alien was directed by ridley scott; Scott later made Gladiator."},
            outputs=[
                ReaderOutput(baseline="b1", answer="Ridley Scott"),
                ReaderOutput(baseline="b2", answer="Ridley Scott"),
                # a remove without a sentinel means the paper's default, [MASK]
                ReaderOutput(baseline="b2", intervention="remove", sentinel="[MASK]", answer="Scott"),
                ReaderOutput(baseline="b2", intervention="placebo", sentinel="[MASK]", answer="Ridley Scott", f1=1.0),
            ],
        ),
        AuditRecord(audit_id="ext-pipeline", cell="X1", dataset="mini", question_id="e2", question="Which letter?",
                    gold="B"),
    ]
    assert records[0].record_id == "ext-pipeline::e1"


@pytest.mark.parametrize(("line", "field", "fragment"), [
    ("{" + BASE + ', "contexts": {"b1": "x"}, "outputs": [{"baseline": "b1", "intervention": "mask"}]}',
     "outputs[0].intervention", "Invalid enum value 'mask'"),
    ("{" + BASE + ', "bogus": 1}', "bogus", "unknown field"),
    ('{"audit_id": "a", "question": "Q?", "gold": "Paris"}', None, "question_id"),
    ("{" + BASE + ', "contexts": {"b1": "x"}, "outputs": [{"baseline": "b2"}]}',
     "outputs[0].baseline", "'b2' has no entry in contexts"),
    ("{" + BASE + ', "contexts": {"b2": "x"}, "outputs": [{"baseline": "b2"}]}', "contexts", "raw-retrieval"),
    ("{" + BASE + ', "contexts": {"b1": "x"}, "outputs": [{"baseline": "b1"}, '
     '{"baseline": "b1", "intervention": "remove"}]}', "outputs[1].intervention", "not raw retrieval"),
    ("{" + BASE + ', "contexts": {"b1": "x", "b2": "y"}, "outputs": [{"baseline": "b2"}, '
     '{"baseline": "b2", "intervention": "insert_mid", "sentinel": "###"}]}', "outputs[1].sentinel", "only remove"),
    ("{" + BASE + ', "contexts": {"b1": "x", "b2": "y"}, "outputs": [{"baseline": "b2", "f1": 37}]}',
     "outputs[0].f1", "[0, 1]"),
    ("{" + BASE + ', "contexts": {"b1": "x", "b2": "y"}, "outputs": [{"baseline": "b2"}, {"baseline": "b2"}]}',
     "outputs[1]", "duplicates outputs[0]"),
    ("{" + BASE + ', "contexts": {"b1": "x", "b2": "y"}, "outputs": [{"baseline": "b1"}, '
     '{"baseline": "b2", "intervention": "placebo"}]}', "outputs[1]", "no unperturbed"),
    ('{"audit_id": "a", ', None, "not valid JSON"),
])
def test_bad_records_name_file_line_and_field(line, field, fragment):
    error = _error(line)
    assert (error.path, error.line, error.field) == ("f.jsonl", 7, field)
    assert fragment in str(error)
    assert str(error).startswith("f.jsonl:7")


def test_a_bad_file_loads_nothing(tmp_path):
    db = tmp_path / "w.duckdb"
    with pytest.raises(RecordError) as info:
        load_audit_files(db, [FIXTURES / "external_records.jsonl", FIXTURES / "bad_records.jsonl"])
    assert info.value.line == 2 and info.value.field == "outputs[1].baseline"
    assert not db.exists()


def test_loading_fills_f1_is_idempotent_and_replaces_changed_records(tmp_path):
    db = tmp_path / "w.duckdb"
    first = load_audit_files(db, [FIXTURES / "external_records.jsonl"])
    assert (first.records, first.new, first.replaced, first.unchanged) == (2, 2, 0, 0)
    again = load_audit_files(db, [FIXTURES / "external_records.jsonl"])
    assert (again.new, again.replaced, again.unchanged) == (0, 0, 2)
    with open_readonly(db) as con:
        rows = con.execute("""SELECT baseline, intervention, sentinel, answer, f1 FROM audit_outputs
                              ORDER BY output_index""").fetchall()
        assert rows == [("b1", "none", None, "Ridley Scott", 1.0), ("b2", "none", None, "Ridley Scott", 1.0),
                        ("b2", "remove", "[MASK]", "Scott", pytest.approx(2 / 3)),
                        ("b2", "placebo", "[MASK]", "Ridley Scott", 1.0)]
        assert con.execute("SELECT count(*) FROM audit_contexts").fetchone()[0] == 2
    record = read_audit_records(FIXTURES / "external_records.jsonl")[0]
    changed = msgspec.structs.replace(record, outputs=record.outputs[:2])
    report = load_audit_records(db, [changed])
    assert (report.new, report.replaced, report.unchanged) == (0, 1, 0)
    with open_readonly(db) as con:
        assert con.execute("SELECT count(*) FROM audit_outputs").fetchone()[0] == 2
        assert con.execute("SELECT count(*) FROM audit_records").fetchone()[0] == 2


def test_cli_import_loads_and_reports_a_bad_line_as_one_line(tmp_path):
    db = tmp_path / "w.duckdb"
    runner = CliRunner()
    ok = runner.invoke(main, ["audit", "--import", str(FIXTURES / "external_records.jsonl"), "--db", str(db)])
    assert ok.exit_code == 0, ok.output
    assert "2 new" in ok.output
    bad = runner.invoke(main, ["audit", "--import", str(FIXTURES / "bad_records.jsonl"), "--db", str(db)])
    assert bad.exit_code == 1
    assert bad.output.strip() == (f"Error: {FIXTURES / 'bad_records.jsonl'}:2: field outputs[1].baseline: "
                                  "'b3' has no entry in contexts")
    assert "Traceback" not in bad.output


def test_audit_log_repairs_a_torn_tail_and_refuses_a_corrupt_middle(tmp_path):
    record = read_audit_records(FIXTURES / "external_records.jsonl")[0]
    path = tmp_path / "log.jsonl"
    log = AuditLog(path)
    log.append(record)
    log.close()
    whole = path.read_bytes()
    path.write_bytes(whole + encode_audit_record(record)[:40])
    state = recover_audit_log(path)
    assert state.truncated_bytes == 40 and path.read_bytes() == whole
    assert state.done_ids == {"e1"}
    path.write_bytes(b"{broken\n" + whole)
    with pytest.raises(AuditLogCorrupt, match=r"log\.jsonl:1: not valid JSON"):
        recover_audit_log(path)
