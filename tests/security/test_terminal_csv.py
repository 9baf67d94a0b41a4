"""Control sequences in warehouse values never reach the terminal raw; CSV cells never run as formulas.

The issue's cases: OSC, BEL and CR in warehouse values were printed raw by `sql`; exported CSV cells
starting `=`, `@`, `+` were not neutralised.
"""
from __future__ import annotations

import csv
import io
import os
import subprocess
import sys
from pathlib import Path

import msgspec
import polars as pl
import pytest
from app_fixture_records import app_trajectories

from trajscope.format import csv_cell_text, terminal_text
from trajscope.warehouse import ingest_trajectories
from trajscope.warehouse.export import to_csv, to_text

ROOT = Path(__file__).parents[2]
# OSC title change ended by BEL, CR (overwrites the line), CSI as ESC [ and as the C1 byte, a screen
# clear, a bidi override (Trojan Source): none may reach a terminal as it is.
HOSTILE = "\x1b]0;pwned\x07 ok\r fake \x1b[31mred\x1b[0m \x9b2J \x1b[2J \u202egnp.exe"
RAW = ["\x1b", "\x07", "\r", "\x9b", "\u202e"]
FORMULAS = ["=HYPERLINK(\"http://x\",\"y\")", "+1+1", "-2+3", "@SUM(A1)", "\tx", "\r=1"]


def raw_controls(text: str) -> list[str]:
    return [c for c in RAW if c in text]


@pytest.fixture(scope="module")
def hostile_db(tmp_path_factory) -> Path:
    db = tmp_path_factory.mktemp("hostile") / "wh.duckdb"
    base = app_trajectories()
    records = [msgspec.structs.replace(base[0], final_answer=HOSTILE)]
    records += [msgspec.structs.replace(t, trajectory_id=f"f{i}", final_answer=f)
                for i, (t, f) in enumerate(zip(base[1:], FORMULAS, strict=False))]
    ingest_trajectories(db, records)
    return db


def _cli(*args: str) -> tuple[int, str]:
    result = subprocess.run([sys.executable, "-m", "trajscope", *args], capture_output=True, text=True,
                            cwd=ROOT, timeout=120, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    return result.returncode, result.stdout + result.stderr


@pytest.mark.parametrize("fmt", ["table", "csv", "markdown"])
def test_sql_prints_control_characters_as_escapes(hostile_db, fmt):
    rc, output = _cli("sql", "SELECT final_answer, final_answer AS \"\x1b[2Jcol\" FROM trajectories",
                      "--db", str(hostile_db), "--format", fmt)
    assert rc == 0, output
    assert raw_controls(output) == [], repr(output[:500])
    assert "\\x1b]0;pwned\\x07" in output  # shown, not dropped
    assert fmt == "table" or "\\u202e" in output  # (the table cuts cells at 60 characters)


def test_an_error_message_prints_control_characters_as_escapes(hostile_db):
    rc, output = _cli("sql", 'SELECT * FROM "\x1b]0;pwned\x07\x1b[2J"', "--db", str(hostile_db))
    assert rc != 0 and "Error:" in output and "Traceback" not in output, output
    assert raw_controls(output) == [] and "\\x1b" in output, repr(output)


def test_ingest_prints_a_hostile_run_id_as_escapes(tmp_path):
    from trajscope.format import encode

    base = app_trajectories()[0]
    hostile = msgspec.structs.replace(base, run=msgspec.structs.replace(base.run, run_id="r\x1b[2J\x07"))
    log = tmp_path / "hostile.jsonl"
    log.write_bytes(encode(hostile) + b"\n")
    rc, output = _cli("ingest", str(log), "--db", str(tmp_path / "w.duckdb"), "--no-progress")
    assert rc == 0, output
    assert raw_controls(output) == [] and "r\\x1b[2J\\x07" in output, repr(output)


def test_exported_csv_cells_never_start_a_formula(hostile_db, tmp_path):
    out = tmp_path / "answers.csv"
    rc, output = _cli("export", "SELECT trajectory_id, final_answer, -5 AS negative, '=1' AS \"=col\" FROM "
                      "trajectories ORDER BY trajectory_id", "--db", str(hostile_db), "--format", "csv",
                      "--out", str(out))
    assert rc == 0, output
    with open(out, newline="") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == ["trajectory_id", "final_answer", "negative", "'=col"]
    answers = {r[1] for r in rows[1:]}
    assert {"'" + f for f in FORMULAS} <= answers
    assert all(not cell.startswith(("=", "+", "-", "@", "\t", "\r")) for r in rows for cell in r if cell != "-5")
    assert {r[2] for r in rows[1:]} == {"-5"}  # a number stays a number


def test_the_page_downloads_share_the_csv_writer():
    df = pl.DataFrame({"a": FORMULAS, "n": [-1.5] * len(FORMULAS)})
    parsed = list(csv.reader(io.StringIO(to_csv(df), newline="")))
    assert [r[0] for r in parsed[1:]] == ["'" + f for f in FORMULAS] and {r[1] for r in parsed[1:]} == {"-1.5"}
    assert raw_controls(to_text(pl.DataFrame({"x": [HOSTILE]}))) == []


@pytest.mark.parametrize("text, shown", [("a\x1bb", "a\\x1bb"), ("a\nb\tc", "a\nb\tc"), ("\x9b", "\\x9b"),
                                         ("\u2066x", "\\u2066x"), ("plain é ü", "plain é ü")])
def test_terminal_text(text, shown):
    assert terminal_text(text) == shown


@pytest.mark.parametrize("text, cell", [("=1", "'=1"), ("ok=1", "ok=1"), ("-x", "'-x"), ("", "")])
def test_csv_cell_text(text, cell):
    assert csv_cell_text(text) == cell
