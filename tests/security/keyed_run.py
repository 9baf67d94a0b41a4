"""The `trajscope run` both secret tests drive: two demo questions through read_gate against the loopback model."""
from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from trajscope.cli import main

KEY_ENV = "TRAJSCOPE_TEST_API_KEY"


def keyed_run(mock_llm, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """Run with the key read from KEY_ENV (the caller sets it and the responder); the warehouse and the log folder."""
    monkeypatch.setenv("TRAJSCOPE_CACHE", str(tmp_path / "cache"))
    db, out = tmp_path / "w.duckdb", tmp_path / "runs"
    result = CliRunner().invoke(main, [
        "run", "--dataset", "demo", "--controller", "read_gate", "--condition", "baseline",
        "--model", "gpt-4o-mini", "--base-url", mock_llm.base_url, "--api-key-env", KEY_ENV,
        "--n", "2", "--seed", "3", "--db", str(db), "--out", str(out), "--retriever", "bm25", "--no-progress",
        "--param", "max_turns=3",
    ], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return db, out
