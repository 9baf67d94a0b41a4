"""A --db that is not a healthy warehouse: every command says so in one line naming the file, exits 3 (docs/
security.md) and leaves the file as it was; no command makes DuckDB reach the network for an extension."""
from __future__ import annotations

import hashlib
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from trajscope.cli import main
from trajscope.warehouse import BAD_WAREHOUSE_EXIT, open_warehouse

FIXTURE_LOG = Path(__file__).parents[1] / "fixtures" / "importers" / "autoact.jsonl"


def _sqlite(path: Path) -> None:
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE runs (x)")
    con.commit()
    con.close()


def _clash(path: Path) -> None:
    with duckdb.connect(str(path)) as con:
        con.execute("CREATE TABLE runs (x INTEGER)")


def _truncated(path: Path, source: Path) -> None:
    path.write_bytes(source.read_bytes()[:20_000])


def _checksum_corrupt(path: Path, source: Path) -> None:
    data = bytearray(source.read_bytes())
    # Every block (262,144 bytes after the 12,288 bytes of headers) starts with its checksum: one flipped
    # byte in each, so whatever a command reads first (the catalog) fails its check.
    for start in range(12_288, len(data), 262_144):
        data[start] ^= 0xFF
    path.write_bytes(bytes(data))


BAD_FILES = {
    "text": (lambda p, w: p.write_text("hello, not a database\n"), "is text, not a trajscope warehouse"),
    "empty": (lambda p, w: p.write_bytes(b""), "is an empty file"),
    "passwd-like": (lambda p, w: p.write_text("root:x:0:0:root:/root:/bin/bash\n"), "is text"),
    "sqlite": (lambda p, w: _sqlite(p), "is a SQLite database"),
    "parquet": (lambda p, w: p.write_bytes(b"PAR1" + b"\0" * 64 + b"PAR1"), "is a Parquet file"),
    "truncated": (_truncated, "warehouse"),
    "checksum": (_checksum_corrupt, "corrupt"),
    "clash": (lambda p, w: _clash(p), "not a trajscope warehouse"),
    "fifo": (lambda p, w: os.mkfifo(p), "is a FIFO"),
}

COMMANDS = {
    "sql": ["sql", "SELECT 1"],
    "export": ["export", "runs", "--format", "csv", "--out", "{tmp}/out.csv"],
    "views": ["views"],
    "report": ["report", "audit"],
    "compare": ["compare", "a", "b"],
    "agreement": ["agreement"],
    "audit-report": ["audit-report"],
    "judge": ["judge", "r1"],
    "ingest": ["ingest", str(FIXTURE_LOG)],
}


def _digest(path: Path) -> str | None:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("kind", list(BAD_FILES))
def test_a_bad_warehouse_file_is_one_line_and_left_as_it_was(kind, command, tmp_path, warehouse_db):
    make, says = BAD_FILES[kind]
    db = tmp_path / "w.duckdb"
    make(db, warehouse_db)
    before = _digest(db)
    args = [a.replace("{tmp}", str(tmp_path)) for a in COMMANDS[command]]
    result = CliRunner().invoke(main, [*args, "--db", str(db)])
    assert "Traceback" not in result.output and not isinstance(result.exception, (AssertionError, TypeError))
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    if kind == "checksum" and result.exit_code == 0:
        # A read that never touches the damaged block can succeed; it must not write the file.
        assert _digest(db) == before
        return
    assert result.exit_code == BAD_WAREHOUSE_EXIT, result.output
    assert len(errors) == 1 and str(db) in errors[0] or "corrupt" in errors[0], result.output
    assert says in errors[0], result.output
    assert _digest(db) == before
    assert not (tmp_path / "out.csv").exists()
    if kind == "checksum" and "corrupt" in errors[0]:
        assert "trajscope ingest" in errors[0]  # says how to rebuild it


@pytest.mark.parametrize("command", ["sql", "views", "compare", "judge", "ingest"])
def test_a_device_or_a_name_over_the_limit_is_one_line(command, tmp_path):
    for db, says in (("/dev/null", "is a character device"), (str(tmp_path / ("a" * 300 + ".duckdb")), "system limit")):
        args = [a.replace("{tmp}", str(tmp_path)) for a in COMMANDS[command]]
        result = CliRunner().invoke(main, [*args, "--db", db])
        assert result.exit_code == BAD_WAREHOUSE_EXIT and "Traceback" not in result.output, result.output
        errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
        assert len(errors) == 1 and says in errors[0], result.output


def test_a_write_open_refuses_a_schema_newer_than_this_code(tmp_path):
    from trajscope.warehouse import WarehouseFileError, latest_schema_version

    db = tmp_path / "w.duckdb"
    with open_warehouse(db) as con:
        con.execute("INSERT INTO schema_migrations (version, name) VALUES (9999, '9999_future.sql')")
    before = _digest(db)
    with pytest.raises(WarehouseFileError, match=f"schema version 9999, newer than this trajscope's "
                                                 f"{latest_schema_version()}"):
        with open_warehouse(db):
            pass
    assert _digest(db) == before


def test_every_connection_has_extension_loading_off(tmp_path, warehouse_db):
    from trajscope.warehouse import open_read

    settings = "SELECT current_setting('autoload_known_extensions'), current_setting('autoinstall_known_extensions')"
    with open_warehouse(tmp_path / "w.duckdb") as con:
        assert con.execute(settings).fetchall() == [(False, False)]
    with open_read(warehouse_db) as con:
        assert con.execute(settings).fetchall() == [(False, False)]


def _no_network_script(db: Path, tmp: Path, bypass_file_check: bool) -> str:
    lines = ["from click.testing import CliRunner"]
    if bypass_file_check:
        # The file check passes a SQLite file: its bytes 8-12 taken as the magic, 16 bytes enough.
        lines += ["import trajscope.warehouse._file_check as fc", "fc._DUCKDB_MAGIC = b'orma'",
                  "fc._MIN_DUCKDB_BYTES = 16"]
    lines.append("from trajscope.cli import main")
    for name, args in COMMANDS.items():
        args = [a.replace("{tmp}", str(tmp)) for a in args]
        lines.append(f"print({name!r}, CliRunner().invoke(main, {args!r} + ['--db', {str(db)!r}]).exit_code)")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("bypass_file_check", [False, True], ids=["checked", "extension-settings-alone"])
@pytest.mark.parametrize("name", ["lite.sqlite", "w.parquet", "w.csv"])
def test_no_command_attempts_a_network_connection(name, bypass_file_check, tmp_path):
    # A SQLite file under three names. With the file check bypassed, the connection settings alone
    # (autoload / autoinstall off) must keep DuckDB from downloading sqlite_scanner.
    db = tmp_path / name
    _sqlite(db)
    script = tmp_path / "run_all.py"
    script.write_text(_no_network_script(db, tmp_path, bypass_file_check))
    trace = tmp_path / "trace.txt"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2]), "HOME": str(tmp_path)}
    probe = subprocess.run(["strace", "-f", "-qq", "-e", "trace=connect", "-o", str(trace), sys.executable,
                            str(script)], capture_output=True, text=True, env=env, timeout=600, cwd=tmp_path)
    traced = not ("ptrace" in probe.stderr and "Operation not permitted" in probe.stderr)
    if not traced:
        # Where the sandbox forbids ptrace, the commands run untraced: a download would still leave the extension
        # in DuckDB's extension folder under HOME, which the check below reads.
        probe = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=600,
                               cwd=tmp_path)
    codes = dict(line.split() for line in probe.stdout.splitlines() if line.strip())
    assert set(codes) == set(COMMANDS), probe.stdout + probe.stderr
    assert all(code != "0" for code in codes.values()), codes
    assert not list((tmp_path / ".duckdb").rglob("*.duckdb_extension")), "an extension was downloaded"
    if traced:
        connects = [line for line in trace.read_text().splitlines() if "AF_INET" in line]
        assert connects == [], connects[:3]
    assert not (tmp_path / ".duckdb" / "extensions").exists()
