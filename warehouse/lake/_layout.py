"""Where each warehouse table lives in a lake: its folder, its partition columns, and the views that read it."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import duckdb

from .._derived import DERIVED
from ._markers import Commit, LakeError, read_commit, read_marker

# Hive partition folders under each table: the dataset and run a row belongs to, and the writer that
# added it. The writer's commit marker (COMMITTED/<writer>) makes its rows visible all at once.
PARTITIONS = ("_dataset", "_run", "_writer")
SHARED = "~"  # the partition value of rows that belong to no run (questions, corpus, audit records)
COMMITTED = "_committed"
CLAIMS = "_claims"
STAGING = "_staging"  # a writer's files while it writes them, outside every table's folder
MARKER = "_trajscope_lake.json"
LAKE_FORMAT = 1
# Tables of the warehouse's own bookkeeping: every process that reads a lake keeps its own.
LOCAL_TABLES = frozenset({"schema_migrations", "views_state", "derived_facts_state"})
# Tables computed from the others at load (warehouse._derived): a lake stores none; a reader's catalog computes them
# for each snapshot of the lake, so rows of writers that ran older code, or a corpus another writer added, are read
# as a warehouse would.
DERIVED_TABLES = frozenset(d.table for d in DERIVED)
_HIVE_TYPES = "{" + ", ".join(f"'{p}': 'VARCHAR'" for p in PARTITIONS) + "}"


@dataclass(frozen=True)
class LakeTable:
    """A warehouse table as a lake holds it: its columns and types, and how a row finds its partition."""

    name: str
    columns: tuple[tuple[str, str], ...]  # (name, DuckDB type), in the table's order

    @property
    def column_names(self) -> tuple[str, ...]:
        return tuple(c for c, _ in self.columns)

    @property
    def shared(self) -> bool:
        """Rows of no single run (a question, a corpus chunk): several writers may add the same row."""
        return "trajectory_id" not in self.column_names and "run_id" not in self.column_names

    def partitioned_select(self, source: str, writer: str) -> str:
        """The table's rows from `source` (a schema name) with their three partition columns."""
        names = self.column_names
        if "trajectory_id" in names and self.name != "trajectories":
            # Child rows take their trajectory's run, so a run's partitions hold all of its rows.
            return (f"SELECT c.*, coalesce(p.dataset, '{SHARED}') AS _dataset, coalesce(p.run_id, '{SHARED}') AS _run, "
                    f"'{writer}' AS _writer FROM {source}.{self.name} c "
                    f"LEFT JOIN {source}.trajectories p ON p.trajectory_id = c.trajectory_id")
        dataset = "dataset" if "dataset" in names else f"'{SHARED}'"
        run = "run_id" if "run_id" in names else f"'{SHARED}'"
        return (f"SELECT *, coalesce({dataset}, '{SHARED}') AS _dataset, coalesce({run}, '{SHARED}') AS _run, "
                f"'{writer}' AS _writer FROM {source}.{self.name}")

    def view_sql(self, lake: Path, name: str | None = None, writers: Sequence[str] | None = None) -> str:
        """A view over the files of the given writers, else of every writer committed when it is read, typed as
        the table is (older files lack newer columns)."""
        cols = ", ".join(f'CAST("{c}" AS {t}) AS "{c}"' for c, t in self.columns)
        # DISTINCT: two writers may both add one shared row (the same question in two logs); a lake
        # ingest refuses a question that differs from the lake's copy, so equal rows are the only repeats.
        distinct = "DISTINCT " if self.shared else ""
        if writers is None:
            committed = f"(SELECT parse_filename(file) FROM glob('{_quoted(lake / COMMITTED)}/*'))"
        else:  # a fixed list: a catalog's snapshot, whose partitions DuckDB prunes before opening a file
            committed = "(" + ", ".join(f"'{_quoted_name(w)}'" for w in writers) + ")" if writers else "(NULL)"
        return (f'CREATE OR REPLACE VIEW {name or self.name} AS SELECT {distinct}{cols} '
                f"FROM read_parquet('{_quoted(lake / self.name)}/**/*.parquet', hive_partitioning = true, "
                f"union_by_name = true, hive_types = {_HIVE_TYPES}) "
                f"WHERE _writer IN {committed}")


def _quoted(path: Path) -> str:
    return str(path).replace("'", "''")


def _quoted_name(name: str) -> str:
    return name.replace("'", "''")


def committed_writers(lake: Path) -> list[str]:
    """The writers whose commit marker is in the lake, sorted (a marker being written has a dot-name)."""
    folder = lake / COMMITTED
    if not folder.is_dir():
        return []
    return sorted(p.name for p in folder.iterdir() if not p.name.startswith(".") and p.is_file())


def read_commits(lake: Path) -> list[Commit]:
    """Every committed writer's marker, by name, each checked (read_commit); a marker being written has a
    dot-name and is skipped."""
    folder = Path(lake) / COMMITTED
    if not folder.is_dir():
        return []
    return [read_commit(p) for p in sorted(folder.iterdir()) if not p.name.startswith(".")]


def lake_tables(con: duckdb.DuckDBPyConnection) -> list[LakeTable]:
    """The warehouse tables of `con`'s main schema that a lake holds, with their column types."""
    rows = con.execute(
        "SELECT table_name, column_name, data_type FROM duckdb_columns() "
        "WHERE schema_name = 'main' AND database_name = current_database() "
        "AND table_name IN (SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main' "
        "AND database_name = current_database()) ORDER BY table_name, column_index").fetchall()
    tables: dict[str, list[tuple[str, str]]] = {}
    for table, column, type_ in rows:
        if table not in LOCAL_TABLES and table not in DERIVED_TABLES:
            tables.setdefault(table, []).append((column, type_))
    return [LakeTable(name, tuple(cols)) for name, cols in tables.items()]


def check_lake(lake: Path) -> Path:
    """The lake's absolute path; LakeError when the folder is not a trajscope lake."""
    lake = Path(lake).expanduser().resolve()
    marker = lake / MARKER
    if not marker.exists():
        raise LakeError(f"{lake}: not a trajscope lake (no {MARKER}); create one with `trajscope lake export "
                        f"{lake} --db WAREHOUSE`")
    fmt = read_marker(marker, "lake marker").get("format")
    if fmt != LAKE_FORMAT:
        raise LakeError(f"{marker}: lake format {fmt!r}, this trajscope reads format {LAKE_FORMAT}")
    return lake


def install_lake_views(con: duckdb.DuckDBPyConnection, lake: Path, tables: list[LakeTable], schema: str) -> None:
    """One view per lake table in an in-memory database `schema` attached to con (a writer's look at the lake)."""
    con.execute(f"ATTACH IF NOT EXISTS ':memory:' AS {schema}")
    for table in tables:
        con.execute(table.view_sql(lake, f"{schema}.main.{table.name}"))


__all__ = ["CLAIMS", "COMMITTED", "DERIVED_TABLES", "LAKE_FORMAT", "LOCAL_TABLES", "LakeError", "LakeTable", "MARKER",
           "PARTITIONS", "SHARED", "STAGING", "check_lake", "committed_writers", "install_lake_views", "lake_tables",
           "read_commits"]
