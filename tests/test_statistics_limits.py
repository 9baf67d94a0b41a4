"""`compare` and `report` read every paired question's row: the command profile's row cap must not stop them.

At 1M synthetic trajectories (250,000 questions per run, bench/scale.py) both stopped at the 100,000-row
cap; here the cap is lowered below the questions of a small warehouse to show they no longer take it.
"""
from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

import trajscope.warehouse as warehouse
from bench.synthetic import write_synthetic_log
from trajscope.cli import main
from trajscope.cli._options import statistics_limits
from trajscope.warehouse import ReadLimits, ingest_paths


@pytest.fixture
def small_cap(tmp_path, monkeypatch):
    log, db = tmp_path / "s.jsonl", tmp_path / "w.duckdb"
    write_synthetic_log(log, 600, seed=3)  # 150 questions in each of 4 paired runs
    ingest_paths(db, [log], progress=False)
    capped = warehouse.DEFAULT_LIMITS.with_overrides(max_rows=100)
    # Every name the commands could take the command profile from.
    monkeypatch.setattr(warehouse, "DEFAULT_LIMITS", capped)
    monkeypatch.setattr(warehouse.read, "DEFAULT_LIMITS", capped)
    return db


def test_compare_reads_more_questions_than_the_command_row_cap(small_cap):
    done = CliRunner().invoke(main, ["compare", "synthetic-baseline", "synthetic-read_gate", "--db", str(small_cap)])
    assert done.exit_code == 0, done.output
    assert re.search(r"^\| all \| 150 \|", done.output, re.M), done.output


def test_report_reads_more_questions_than_the_command_row_cap(small_cap):
    done = CliRunner().invoke(main, ["report", "read-gate", "--runs", "synthetic-baseline,synthetic-read_gate",
                                     "--db", str(small_cap), "--format", "markdown"])
    assert done.exit_code == 0, done.output
    assert "n = 300 trajectories from 2 run(s)" in done.output


def test_statistics_limits_keep_every_other_bound():
    limits = statistics_limits(7.0)
    assert isinstance(limits, ReadLimits) and limits.timeout_s == 7.0
    assert limits.max_rows >= 10_000_000
    # The byte cap still bounds the result: the page profile's, not unlimited.
    assert 0 < limits.max_result_mb <= 256
