"""One read entry point: outside warehouse/read no module opens a DuckDB connection, reaches the read path's
private modules or a Reader's connection; and every read command's queries go through a Reader, so an
injected runaway query is stopped at the time limit on each (a command reading another way would finish)."""
from __future__ import annotations

import ast
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

import trajscope.warehouse.read._reader as reader_module
from trajscope.cli import main
from trajscope.warehouse import QueryTimeout, ReadLimits, ingest_trajectories, open_read
from trajscope.warehouse.read import DEFAULTS, PROFILES, Reader, profile_limits

ROOT = Path(__file__).resolve().parents[1]
SCANNED = ("app", "engine", "ingest", "trajscope", "warehouse", "bench")
READ_PACKAGE = ROOT / "warehouse" / "read"

# Calls that open or run on a raw connection; only the read path (and the write path's own open) make them.
RAW_CALLS = {"connect", "open_readonly", "connect_retrying", "connect_sandboxed", "fetch_bounded", "fetch_rows",
             "time_limit"}
# file -> the raw calls it may make, and why.
ALLOWED = {
    "warehouse/_file_lock.py": ({"connect"}, "connect_retrying itself: the one place a warehouse file is opened"),
    "warehouse/_connection.py": ({"connect_retrying", "open_readonly"},
                                 "open_warehouse, the write path; open_readonly, the tests' raw inspection"),
    "bench/ingest_vs_read_json.py": ({"connect"}, "the baseline it measures: DuckDB on the raw log, no warehouse"),
    "warehouse/_loader.py": ({"connect"}, "the split state's scratch in-memory DuckDB (':memory:'), no warehouse file"),
    "warehouse/_sql_reads.py": ({"connect"}, "an in-memory DuckDB per thread that only parses the fact units' SQL"),
    "bench/app_pages.py": ({"connect"}, "--funnel-before rewrites a view in its own copy of the bench warehouse"),
    "bench/ray_matrix.py": ({"connect"}, "reads back the two warehouses it built, to check they hold the same rows"),
}


def _sources():
    for top in SCANNED:
        for path in sorted((ROOT / top).rglob("*.py")):
            if "__pycache__" not in path.parts and READ_PACKAGE not in path.parents:
                yield path


def _called_name(node: ast.Call) -> str | None:
    func = node.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def raw_uses(path: Path, tree: ast.AST) -> list[str]:
    """Each raw connection call, private read-path import and Reader-connection access in one file."""
    rel = path.relative_to(ROOT).as_posix()
    allowed = ALLOWED.get(rel, (set(), ""))[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = _called_name(node)
            receiver = node.func.value if isinstance(node.func, ast.Attribute) else None
            # `connect` counts on duckdb (or bare, from `from duckdb import connect`), not on sqlite3 or a client.
            if name == "connect" and not (receiver is None or (isinstance(receiver, ast.Name)
                                                               and receiver.id == "duckdb")):
                continue
            if name in RAW_CALLS and name not in allowed:
                found.append(f"{rel}:{node.lineno}: calls {name}()")
        elif isinstance(node, ast.ImportFrom) and node.module:
            module = node.module
            if module.startswith("trajscope.warehouse.read._") or (module == "trajscope.warehouse.read" and any(
                    a.name.startswith("_") for a in node.names)):
                found.append(f"{rel}:{node.lineno}: imports the read path's private {module}")
        elif isinstance(node, ast.Attribute) and node.attr == "_con":
            if not (isinstance(node.value, ast.Name) and node.value.id == "self"):
                found.append(f"{rel}:{node.lineno}: reaches a Reader's connection (._con)")
    return found


def test_no_module_outside_the_read_path_opens_a_read_connection_another_way():
    bad = []
    for path in _sources():
        bad += raw_uses(path, ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
    assert not bad, "reads must go through warehouse.open_read / run_read_query:\n" + "\n".join(bad)
    assert sum(1 for _ in _sources()) > 300  # the scan sees the code at all


@pytest.mark.parametrize("source", [
    "import duckdb\ncon = duckdb.connect('w.duckdb', read_only=True)\n",
    "from duckdb import connect\ncon = connect('w.duckdb')\n",
    "from trajscope.warehouse import open_readonly\nwith open_readonly('w.duckdb') as con: pass\n",
    "from trajscope.warehouse.read._fetch import fetch_bounded\n",
    "def f(reader):\n    return reader._con.execute('DELETE FROM runs')\n",
])
def test_the_scan_catches_each_way_around(source):
    assert raw_uses(ROOT / "app" / "x.py", ast.parse(source))


def test_the_scan_lets_other_connections_be():
    source = "import sqlite3\ncon = sqlite3.connect('cache.sqlite')\nclient.connect()\nself._con.close()\n"
    assert raw_uses(ROOT / "engine" / "x.py", ast.parse(source)) == []


def test_a_reader_hands_out_no_connection(tmp_path):
    db = tmp_path / "w.duckdb"
    _warehouse(db)
    with open_read(db) as reader:
        public = {name: getattr(reader, name) for name in dir(reader) if not name.startswith("_")}
        assert not [n for n, v in public.items() if isinstance(v, duckdb.DuckDBPyConnection)]
        assert reader.execute("SELECT count(*) FROM trajectories").fetchall() == [(4,)]


def test_the_limit_defaults_live_in_one_table():
    # Every profile is one column of DEFAULTS, and ReadLimits() is the command column.
    assert set(DEFAULTS) == set(ReadLimits.__dataclass_fields__)
    for i, profile in enumerate(PROFILES):
        assert profile_limits(profile) == ReadLimits(**{k: v[i] for k, v in DEFAULTS.items()})
    assert ReadLimits() == profile_limits("command")
    from trajscope.app.access import AppConfig

    config = AppConfig(db_path=Path("w.duckdb"))
    assert config.console_limits() == profile_limits("console")
    assert config.page_limits() == profile_limits("page")


def _numbers_outside_the_table() -> list[str]:
    """Defaults of a limit written as a number anywhere but the table: `lock_wait_s: float = 15.0` and the like.
    timeout_s and threads also name other things (a model request's timeout, ONNX threads), so not those."""
    names = (set(DEFAULTS) - {"timeout_s", "threads"}) | {"sql_timeout_s", "sql_row_cap", "sql_max_mb",
                                                         "page_timeout_s"}
    bad = []
    for path in _sources():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            pairs = []
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
                pairs.append((node.target.id, node.value))
            elif isinstance(node, ast.arguments):
                positional = node.posonlyargs + node.args
                pairs += list(zip([a.arg for a in positional[len(positional) - len(node.defaults):]], node.defaults,
                                  strict=True))
                pairs += [(a.arg, d) for a, d in zip(node.kwonlyargs, node.kw_defaults, strict=True) if d is not None]
            for name, value in pairs:
                if name in names and isinstance(value, ast.Constant) and isinstance(value.value, (int, float)):
                    bad.append(f"{path.relative_to(ROOT)}:{value.lineno}: {name} = {value.value}")
    return bad


def test_no_limit_default_is_written_outside_the_table():
    bad = _numbers_outside_the_table()
    assert not bad, "limit defaults belong in warehouse/read/_limits.py DEFAULTS:\n" + "\n".join(bad)


# The runaway: every statement a Reader runs waits on this first (its own parameters still bind), and
# every Reader's time limit is 0.5 s.
SLOW_SQL = "SELECT count(*) FROM range(100000000) a, range(100000) b WHERE a.range * b.range = -1"

# Each read command, with arguments that reach its queries.
READ_COMMANDS = {
    "report": ["report", "read-gate", "--runs", "r1"],
    "audit-report": ["audit-report"],
    "agreement": ["agreement"],
    "agreement --human": ["agreement", "--human", "r1"],
    "compare": ["compare", "r1", "r2"],
    "views NAME": ["views", "runs"],
    "export-traces": ["export-traces", "r1", "--format", "openinference", "--out", "{tmp}/t.jsonl"],
    "views": ["views"],
    "views NAME, no warehouse": ["views", "runs"],  # the blank warehouse this code's migrations build
}


def _warehouse(db: Path) -> None:
    from foundation_records import fixture_trajectories

    ingest_trajectories(db, fixture_trajectories())


@pytest.fixture
def runaway(monkeypatch):
    calls = []
    original, checked = Reader.__init__, Reader._statement

    def short(self, con, limits, path):
        original(self, con, limits.with_overrides(timeout_s=0.5), path)

    def slow(self, sql):
        calls.append(sql)
        return f"SELECT q.* FROM ({checked(self, sql)}) q WHERE ({SLOW_SQL}) = 0"

    monkeypatch.setattr(reader_module.Reader, "__init__", short)
    monkeypatch.setattr(reader_module.Reader, "_statement", slow)
    return calls


@pytest.mark.parametrize("name", list(READ_COMMANDS))
def test_each_read_command_stops_a_runaway_query(name, runaway, tmp_path):
    db = tmp_path / "w.duckdb"
    _warehouse(db)
    args = [a.replace("{tmp}", str(tmp_path)) for a in READ_COMMANDS[name]]
    if "no warehouse" not in name:
        args += ["--db", str(db)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1, result.output
    assert runaway, f"{name}: no query went through a Reader"
    lines = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(lines) == 1 and "time limit of 0.5 s" in lines[0], (result.output, result.exception)


def test_demo_summary_and_guide_stop_a_runaway_query(runaway, tmp_path):
    from trajscope.cli import demo_cmd

    db = tmp_path / "w.duckdb"
    _warehouse(db)
    with pytest.raises(QueryTimeout, match="time limit of 0.5 s"):
        demo_cmd._print_run_summary(db)
    with pytest.raises(QueryTimeout, match="time limit of 0.5 s"):
        demo_cmd._print_guide(db, 8501, serving=False)
    assert len(runaway) == 2


# Writes too go through the warehouse package: engine and app hold no write open and no DML of their own.
WRITE_CALLS = {"open_warehouse", "transaction"}
DML = ("INSERT INTO", "INSERT OR", "DELETE FROM", "CREATE TABLE", "DROP TABLE", "ALTER TABLE")
OWN_STORES = {"engine/llm/_cache.py": "its SQLite response cache, not the warehouse"}


def _writes(path: Path, tree: ast.AST) -> list[str]:
    rel = path.relative_to(ROOT).as_posix()
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _called_name(node) in WRITE_CALLS:
            found.append(f"{rel}:{node.lineno}: calls {_called_name(node)}()")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and rel not in OWN_STORES:
            upper = " ".join(node.value.upper().split())
            found += [f"{rel}:{node.lineno}: SQL {verb}" for verb in DML if verb in upper]
    return found


def test_engine_and_app_write_the_warehouse_only_through_the_warehouse_package():
    bad = []
    for top in ("engine", "app"):
        for path in sorted((ROOT / top).rglob("*.py")):
            bad += _writes(path, ast.parse(path.read_text(encoding="utf-8")))
    assert not bad, "warehouse writes belong in the warehouse package (warehouse.judgments):\n" + "\n".join(bad)


def test_the_write_scan_catches_a_judge_pass_of_its_own():
    source = ("from warehouse import open_warehouse\nwith open_warehouse(db) as con:\n"
              "    con.execute('DELETE FROM answer_checks WHERE trajectory_id = ?', [t])\n")
    assert len(_writes(ROOT / "engine" / "x.py", ast.parse(source))) == 2
