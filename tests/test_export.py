"""Every export format parses back to the same table."""
import csv
import io
import re
import subprocess
import sys

import polars as pl
import pytest
from click.testing import CliRunner
from foundation_records import fixture_trajectories

from trajscope.cli import main
from trajscope.warehouse import ingest_trajectories
from trajscope.warehouse.export import export_table, to_latex, to_markdown

DF = pl.DataFrame({"run": ["a_1", "b&c"], "acc": [0.5, 0.125], "n": [3, 4], "tags": [["x", "y"], []]})


def parse_markdown(text):
    lines = text.strip().splitlines()

    def cells(line):
        return [c.strip() for c in line.strip().strip("|").split("|")]

    return cells(lines[0]), [cells(line) for line in lines[2:]]


def parse_latex(text):
    body = text.split(r"\midrule")[1].split(r"\bottomrule")[0]
    header = text.split(r"\toprule")[1].split(r"\midrule")[0]
    def cells(line):
        return [c.strip() for c in line.replace(r"\\", "").split(" & ")]

    def unescape(s):
        return re.sub(r"\\([&_%$#{}])", r"\1", s)

    rows = [[unescape(c) for c in cells(line)] for line in body.strip().splitlines()]
    return [unescape(c) for c in cells(header.strip())], rows


def test_csv_round_trip():
    back = list(csv.DictReader(io.StringIO(export_table(DF, "csv").decode())))
    assert [r["run"] for r in back] == ["a_1", "b&c"]
    assert [float(r["acc"]) for r in back] == [0.5, 0.125]
    assert back[0]["tags"] == "x, y"


def test_parquet_round_trip():
    assert pl.read_parquet(io.BytesIO(export_table(DF, "parquet"))).equals(DF)


def test_markdown_round_trip():
    header, rows = parse_markdown(to_markdown(DF))
    assert header == ["run", "acc", "n", "tags"]
    assert rows[1] == ["b&c", "0.125", "4", ""]


def test_latex_is_booktabs_and_round_trips():
    text = to_latex(DF, caption="Results", label="tab:r")
    assert r"\toprule" in text and r"\midrule" in text and r"\bottomrule" in text
    assert r"\begin{tabular}{lrrl}" in text and r"\caption{Results}" in text
    header, rows = parse_latex(text)
    assert header == ["run", "acc", "n", "tags"]
    assert rows[0][:3] == ["a_1", "0.500", "3"] and rows[1][0] == "b&c"


@pytest.fixture()
def db(tmp_path):
    path = tmp_path / "w.duckdb"
    ingest_trajectories(path, fixture_trajectories())
    return path


@pytest.mark.parametrize("fmt", ["csv", "parquet", "latex", "markdown"])
def test_cli_export_view(db, tmp_path, fmt):
    out = tmp_path / f"t.{fmt}"
    result = CliRunner().invoke(main, ["export", "run_summary", "--db", str(db), "--format", fmt, "--out", str(out)])
    assert result.exit_code == 0, result.output
    if fmt == "parquet":
        df = pl.read_parquet(out)
        assert df.height == 2 and sorted(df["run_id"]) == ["run_a", "run_b"]
    elif fmt == "csv":
        assert len(list(csv.DictReader(out.open()))) == 2
    elif fmt == "markdown":
        assert len(parse_markdown(out.read_text())[1]) == 2
    else:
        assert len(parse_latex(out.read_text())[1]) == 2


def test_cli_sql_is_read_only(db):
    runner = CliRunner()
    ok = runner.invoke(main, ["sql", "SELECT count(*) AS n FROM trajectories", "--db", str(db), "--format", "csv"])
    assert ok.exit_code == 0 and ok.output.splitlines() == ["n", "4"]
    bad = runner.invoke(main, ["sql", "DELETE FROM trajectories", "--db", str(db)])
    assert bad.exit_code != 0 and "refused" in bad.output


def test_cli_ingest_reports_file_line_field(tmp_path):
    db = tmp_path / "w.duckdb"
    log = tmp_path / "bad.jsonl"
    log.write_text('{"schema_version": "1", "trajectory_id": "x", "run": {"run_id": 3}}\n')
    result = CliRunner().invoke(main, ["ingest", str(log), "--db", str(db)])
    assert result.exit_code == 1
    assert f"{log}:1: field run.run_id" in result.output and "nothing was written" in result.output


def test_console_script_schema_matches_module():
    out = subprocess.run([sys.executable, "-m", "trajscope", "schema"], capture_output=True, text=True, check=True)
    from trajscope.format import json_schema_text

    assert out.stdout == json_schema_text()


def test_cli_sql_table_keeps_wide_results_readable(db):
    columns = ", ".join(f"'value {i}' AS a_rather_long_column_name_{i}" for i in range(14))
    result = CliRunner().invoke(main, ["sql", f"SELECT {columns}", "--db", str(db)])
    assert result.exit_code == 0, result.output
    header, rule, row = result.output.splitlines()[:3]
    # Every column as wide as its name: nothing squeezed into a few characters or elided.
    assert all(f"a_rather_long_column_name_{i}" in header for i in range(14))
    assert row.count("value ") == 14 and "…" not in row


@pytest.mark.parametrize("configured", [False, True])
def test_parquet_redacts_keys_and_key_fragments_and_keeps_the_rest(monkeypatch, configured):
    key = "zq9Xw7Lp3Vt8Rm2K"  # no well-known shape: only a configured key finds its fragments
    if configured:
        monkeypatch.setenv("TRAJSCOPE_TEST_API_KEY", key)
    df = pl.DataFrame({"text": [f"echoed {key[3:13]}", "Authorization: Bearer abcdefghijkl12", "plain", None],
                       "n": [1, 2, 3, 4]})
    got = pl.read_parquet(io.BytesIO(export_table(df, "parquet")))
    assert got["text"].to_list() == [f"echoed {key[3:13]}" if not configured else "echoed [REDACTED]",
                                     "Authorization: Bearer [REDACTED]", "plain", None]
    assert got["n"].to_list() == [1, 2, 3, 4]
