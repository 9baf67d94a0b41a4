"""Failures a user can cause end in one line naming the file, line and field or the limit: no traceback."""
from __future__ import annotations

import json
import sys

import pytest
from click.testing import CliRunner

from trajscope.cli import main
from trajscope.format import RecordError, decode_trajectory, encode, nesting_of


def deep_record(depth: int) -> bytes:
    sys.path.insert(0, __file__.rsplit("/security/", 1)[0])
    from foundation_records import fixture_trajectories

    line = json.loads(encode(fixture_trajectories()[0]))
    value = '"x"'
    text = json.dumps(line).replace('"args": {"chunk_id": "g1"}', '"args": {"nested": ' +
                                    '{"a": ' * depth + value + "}" * depth + "}", 1)
    assert '"nested"' in text
    return text.encode()


def test_a_record_nested_1000_levels_is_a_stated_limit_with_file_line_and_field(tmp_path):
    with pytest.raises(RecordError) as refused:
        decode_trajectory(deep_record(1000), path="deep.jsonl", line=3)
    error = refused.value
    assert (error.path, error.line) == ("deep.jsonl", 3)
    assert error.field.startswith("steps[1].args.nested.a")
    assert "levels deep, past the nesting limit of 100 levels" in error.message


def test_ingest_of_a_deeply_nested_record_is_one_line_and_writes_nothing(tmp_path):
    log = tmp_path / "deep.jsonl"
    log.write_bytes(deep_record(1000) + b"\n")
    db = tmp_path / "w.duckdb"
    result = CliRunner().invoke(main, ["ingest", str(log), "--db", str(db)])
    assert result.exit_code != 0 and "Traceback" not in result.output
    assert f"{log}:1: field steps[1].args.nested" in result.output
    assert not db.exists()


def test_the_upload_check_reports_the_nesting_limit():
    from trajscope.app.upload import prepare_upload

    prepared = prepare_upload("deep.jsonl", deep_record(1000) + b"\n")
    assert not prepared.ok and prepared.errors, prepared
    error = prepared.errors[0]
    assert (error.path, error.line) == ("deep.jsonl", 1) and error.field.startswith("steps[1].args.nested")
    assert "nesting limit" in error.message


def test_nesting_of_names_the_deepest_path():
    assert nesting_of('{"a": [1, {"b": {"c": 2}}]}') == (4, "a[1].b")
    assert nesting_of("[]") == (1, "")


@pytest.mark.parametrize("args, says", [
    (["sql", "SELECT INTERVAL 1 DAY AS iv"], None),
    (["sql", "SELECT 1::HUGEINT AS h, uuid() AS u, 'ab'::BLOB AS b, [1] AS l, {'a': 1} AS s, "
             "'12:00:00+02'::TIMETZ AS tz, union_value(k := 1) AS un, '101'::BIT AS bit"], None),
    (["export", "SELECT INTERVAL 2 DAY AS iv", "--format", "parquet", "--out", "{tmp}/x.parquet"], None),
])
def test_odd_types_print_instead_of_a_traceback(args, says, warehouse_db, tmp_path):
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    result = CliRunner().invoke(main, [*args, "--db", str(warehouse_db)])
    assert result.exit_code == 0, result.output
    assert result.exception is None


@pytest.mark.parametrize("make, says", [
    (lambda p: p.write_text("not a database at all\n"), "is text, not a trajscope warehouse"),
    (lambda p: p.write_bytes(b""), "is an empty file"),
    (lambda p: None, "no warehouse here yet"),
])
@pytest.mark.parametrize("command", [["sql", "SELECT 1"], ["export", "runs", "--format", "csv", "--out", "x.csv"],
                                     ["compare", "a", "b"], ["audit-report"]])
def test_a_db_that_is_no_warehouse_is_one_line(make, says, command, tmp_path):
    db = tmp_path / "w.duckdb"
    make(db)
    result = CliRunner().invoke(main, [*command, "--db", str(db)])
    assert result.exit_code != 0 and "Traceback" not in result.output
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and says in errors[0], result.output


@pytest.mark.parametrize("command", [["sql", "SELECT 1"], ["compare", "a", "b"]])
def test_a_directory_as_db_is_one_line(command, tmp_path):
    result = CliRunner().invoke(main, [*command, "--db", str(tmp_path)])
    assert result.exit_code != 0 and "is a directory" in result.output and "Traceback" not in result.output


@pytest.mark.parametrize("fmt", ["openinference", "otel_genai", "atif"])
def test_a_foreign_log_nested_1000_levels_is_a_stated_limit(fmt, tmp_path):
    record = '{"trace_id": "t1", "span_id": "s1", "name": "search", "attributes": {"x": ' + \
             '{"a": ' * 1000 + '"x"' + "}" * 1000 + "}}"
    log = tmp_path / "deep.jsonl"
    log.write_text(record + "\n")
    result = CliRunner().invoke(main, ["ingest", str(log), "--db", str(tmp_path / "w.duckdb"), "--format", fmt])
    assert result.exit_code != 0 and result.exception is None or isinstance(result.exception, SystemExit)
    assert f"{log}:1: field attributes.x.a" in result.output and "nesting limit" in result.output
