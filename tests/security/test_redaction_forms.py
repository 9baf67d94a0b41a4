"""Redaction never changes a JSON value's type, finds JSON-escaped keys, and covers every error message.

The issue's cases: `usage.prompt_tokens: 1234567890` with a key ending `1234567890` was logged as
`"tokens_in":[REDACTED]` (invalid JSON: the run's warehouse load failed while `run` exited 0); a key
written `\\u0073k-test-\\u0053ECRET…` was stored with 9 key characters; DuckDB's
`Could not convert string 'xx-SECRET1234567890' to INT32` was printed as it was.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from keyed_run import KEY_ENV, keyed_run

from trajscope.engine.mock_llm import reply_tool_call
from trajscope.format import MIN_FRAGMENT, AppendOnlyLog, redact, redact_json_line

ROOT = Path(__file__).parents[2]
KEY = "sk-test-SECRET1234567890"
DIGITS = 1234567890  # the key's last ten characters, as a number


def leaked(text: str) -> list[str]:
    return [KEY[i:i + MIN_FRAGMENT] for i in range(len(KEY) - MIN_FRAGMENT + 1) if KEY[i:i + MIN_FRAGMENT] in text]


def escaped(text: str, which: str = "sS") -> str:
    """text with the characters in `which` written as JSON \\u escapes (as a JSON string's inside)."""
    return "".join(f"\\u{ord(c):04x}" if c in which else c for c in text)


@pytest.fixture
def key_env(monkeypatch):
    monkeypatch.setenv(KEY_ENV, KEY)


def test_a_number_matching_the_key_keeps_its_type(key_env):
    line = json.dumps({"usage": {"prompt_tokens": DIGITS}, "note": f"key {KEY}"}).encode()
    out = json.loads(redact_json_line(line))
    assert out["usage"]["prompt_tokens"] == DIGITS and out["note"] == "key [REDACTED]"


@pytest.mark.parametrize("form", [
    escaped(KEY),  # \u0073k-test-\u0053ECRET…
    escaped(KEY, "sk-tS0123456789"),  # almost every character escaped
    KEY.replace("-", "\\u002d"),
    escaped(KEY[8:], "S"),  # a fragment only (SECRET1234567890)
])
def test_an_escaped_key_is_found_in_a_json_line_and_in_text(key_env, form):
    line = ('{"trajectory_id": "t1", "answer": "the key is ' + form + ' ok", "n": 3}').encode()
    assert json.loads(line)["answer"].find(KEY[8:]) > 0  # the line really holds the key
    out = redact_json_line(line)
    decoded = json.loads(out)
    assert leaked(decoded["answer"]) == [] and "[REDACTED]" in decoded["answer"] and decoded["n"] == 3
    assert leaked(redact(f"error near {form}").replace("\\u", "")) == [] and "[REDACTED]" in redact(form)


def test_a_key_shape_written_escaped_is_found_without_a_configured_key():
    shape = "sk-" + "A" * 20
    line = ('{"a": "' + escaped(shape, "s") + '"}').encode()
    assert json.loads(redact_json_line(line)) == {"a": "[REDACTED]"}


def test_the_run_log_line_stays_json_with_the_number(key_env, tmp_path):
    log = AppendOnlyLog(tmp_path / "run.jsonl")
    log.append(json.dumps({"steps": [{"tokens_in": DIGITS, "text": f"echo {escaped(KEY)}"}]}).encode())
    log.close()
    record = json.loads((tmp_path / "run.jsonl").read_text())
    assert record["steps"][0]["tokens_in"] == DIGITS and leaked(record["steps"][0]["text"]) == []


def test_run_with_a_key_echoing_model_loads_and_keeps_token_counts(mock_llm, key_env, tmp_path, monkeypatch):
    def echo(request):
        if any(m.get("role") == "tool" for m in request.messages):
            return reply_tool_call("final", {"answer": f"Denmore {escaped(KEY)}"}, tokens_in=DIGITS)
        return reply_tool_call("search", {"query": "bridge"}, tokens_in=DIGITS)

    mock_llm.responder = echo
    db, out = keyed_run(mock_llm, tmp_path, monkeypatch)
    [log] = list(out.glob("*.jsonl"))
    records = [json.loads(line) for line in log.read_text().splitlines()]  # every line is JSON
    assert len(records) == 2
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM trajectories").fetchone()[0] == 2
        tokens = {r[0] for r in con.execute("SELECT tokens_in FROM steps WHERE tokens_in IS NOT NULL").fetchall()}
        answers = " ".join(r[0] or "" for r in con.execute("SELECT final_answer FROM trajectories").fetchall())
    assert tokens == {DIGITS} and leaked(answers) == []


def test_every_cli_error_message_is_redacted(key_env, warehouse_db):
    # The user's own SQL holds the key: DuckDB's error quotes it back.
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = str(warehouse_db.parent / "never.csv")
    for args in (["sql", "SELECT CAST('xx-SECRET1234567890' AS INTEGER)"],
                 ["sql", f'SELECT * FROM "{KEY}"'],
                 ["export", f"SELECT CAST('{KEY}' AS INTEGER)", "--format", "csv", "--out", out],
                 ["compare", KEY, "run_base"]):
        result = subprocess.run([sys.executable, "-m", "trajscope", *args, "--db", str(warehouse_db)],
                                capture_output=True, text=True, cwd=ROOT, timeout=120, env=env)
        output = result.stdout + result.stderr
        assert result.returncode != 0 and "Traceback" not in output, output[-2000:]
        assert "Error:" in output and leaked(output) == [], output[-2000:]
