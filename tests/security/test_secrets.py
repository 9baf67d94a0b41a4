"""No key and no fragment of one (>= 8 characters) in anything written: log, cache, warehouse, exports, errors.

A loopback model server echoes the last 12 characters of the Authorization header into its answers
(a tool-call argument, the final answer, and an HTTP error message), as a leaky proxy would.
"""
from __future__ import annotations

import duckdb
import pytest
from click.testing import CliRunner
from keyed_run import KEY_ENV, keyed_run

from trajscope.cli import main
from trajscope.engine.mock_llm import reply_error, reply_tool_call
from trajscope.format import MIN_FRAGMENT, redact

KEY = "sk-proj-Zq81vVtest-SECRET123"


def fragments(key: str = KEY) -> list[str]:
    return [key[i:i + MIN_FRAGMENT] for i in range(len(key) - MIN_FRAGMENT + 1)]


def leaked(text: str) -> list[str]:
    return [f for f in fragments() if f in text]


def echo_key_tail(request):
    tail = request.headers.get("authorization", "")[-12:]
    if "error please" in request.text():
        return reply_error(400, f"bad request for key ...{tail}")
    if any(m.get("role") == "tool" for m in request.messages):
        return reply_tool_call("final", {"answer": f"Denmore {tail}"})
    return reply_tool_call("search", {"query": f"bridge {tail}"})


@pytest.fixture
def leaky_run(mock_llm, tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, KEY)
    mock_llm.responder = echo_key_tail
    db, out = keyed_run(mock_llm, tmp_path, monkeypatch)
    # The server did receive the key and echo its tail: the test would catch a leak.
    assert mock_llm.chat_requests[0].headers["authorization"] == f"Bearer {KEY}"
    return db, out, tmp_path


def test_the_key_tail_reaches_neither_the_log_nor_the_cache(leaky_run):
    db, out, tmp = leaky_run
    [log] = list(out.glob("*.jsonl"))
    text = log.read_text()
    assert "[REDACTED]" in text and leaked(text) == []
    cache_bytes = b"".join(p.read_bytes() for p in (tmp / "cache").rglob("*") if p.is_file())
    assert cache_bytes and leaked(cache_bytes.decode("utf-8", "replace")) == []


def test_the_key_tail_reaches_neither_the_warehouse_nor_an_export(leaky_run):
    db, _, tmp = leaky_run
    with duckdb.connect(str(db), read_only=True) as con:
        columns = con.execute("SELECT table_name, column_name FROM duckdb_columns() WHERE NOT internal "
                              "AND data_type = 'VARCHAR' AND table_name IN (SELECT table_name FROM duckdb_tables())"
                              ).fetchall()
        stored = "\n".join(str(v) for table, column in columns
                           for (v,) in con.execute(f'SELECT "{column}" FROM "{table}"').fetchall())
    assert "[REDACTED]" in stored and leaked(stored) == []
    runner = CliRunner()
    for fmt, name in (("csv", "steps.csv"), ("markdown", "steps.md"), ("latex", "steps.tex")):
        result = runner.invoke(main, ["export", "steps", "--db", str(db), "--format", fmt, "--out", str(tmp / name)])
        assert result.exit_code == 0, result.output
        assert leaked((tmp / name).read_text()) == []


def test_an_error_text_from_the_endpoint_is_redacted(mock_llm, monkeypatch):
    import asyncio

    from trajscope.engine.llm import ChatModel, ModelError, resolve_model

    monkeypatch.setenv("TRAJSCOPE_TEST_API_KEY", KEY)
    mock_llm.responder = echo_key_tail
    config = resolve_model("gpt-4o-mini", base_url=mock_llm.base_url, api_key_env="TRAJSCOPE_TEST_API_KEY")

    async def call():
        async with ChatModel(config.with_overrides(max_retries=0)) as model:
            await model.complete([{"role": "user", "content": "error please"}])

    with pytest.raises(ModelError) as failed:
        asyncio.run(call())
    assert "SECRET123"[-8:] not in str(failed.value) and leaked(str(failed.value)) == []
    assert "[REDACTED]" in str(failed.value)


@pytest.mark.parametrize("text, kept", [
    ("Authorization: Bearer abc.DEF-123_456~xyz", "Authorization: Bearer [REDACTED]"),
    ("key sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAA here", "key [REDACTED] here"),
    ("aws AKIAABCDEFGHIJKLMNOP", "aws [REDACTED]"),
    ("gh ghp_" + "a" * 36, "gh [REDACTED]"),
    ("Paris is the capital; sketch-based bearers.", "Paris is the capital; sketch-based bearers."),
])
def test_key_shapes_and_bearer_tokens_are_redacted_without_a_configured_key(text, kept):
    assert redact(text) == kept


def test_any_fragment_of_a_configured_key_is_redacted_and_nothing_else(monkeypatch):
    monkeypatch.setenv("SOME_SERVICE_TOKEN", KEY)
    for start in range(0, len(KEY) - MIN_FRAGMENT + 1, 3):
        piece = KEY[start:start + MIN_FRAGMENT + 2]
        assert leaked(redact(f"x {piece} y")) == []
    assert redact("the 7-char ROJ-Zq8 stays") == "the 7-char ROJ-Zq8 stays"
    assert redact(f"two {KEY[:9]} and {KEY[-10:]}") == "two [REDACTED] and [REDACTED]"
