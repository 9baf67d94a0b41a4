"""What a report is built from: the chosen runs, their grouping, the SQL files and the provenance footnote."""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import warnings
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

BY_CHOICES = ("dataset", "none")
POOLED = "all"


class ReportError(ValueError):
    """A report asked for something the warehouse does not hold (a run id, a parameter)."""


@functools.cache
def sql_file(name: str) -> str:
    """The text of warehouse/report/<name>.sql (first line: its one-line description)."""
    return (resources.files("warehouse.report") / f"{name}.sql").read_text()


def frame(con: duckdb.DuckDBPyConnection, sql: str, params: dict[str, Any] | None = None) -> pl.DataFrame:
    """A query's result as a polars frame (through Arrow, no per-row Python objects)."""
    cursor = con.execute(sql, params or {})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # DuckDB notes the extra copy of a DB-API result; it is small here
        return pl.from_arrow(cursor.to_arrow_table())


@dataclass(frozen=True)
class RunInfo:
    """One chosen run: the settings a report groups and labels it by."""

    run_id: str
    dataset: str
    controller: str | None
    condition: str | None
    model: str | None
    seed: int | None
    embedding_model: str | None
    reasoning_effort: str | None
    read_action: bool
    n_trajectories: int

    @property
    def method(self) -> str:
        """controller:condition, the row label of a method."""
        return f"{self.controller or '?'}:{self.condition or '?'}"


_DIGESTS: dict[tuple[str, int, int], str] = {}


def file_digest(path: str | Path | None) -> str:
    """sha256 of the warehouse file (the footnote's pointer to exactly what was read); computed once per
    file version (path, size, modification time) in a process, as a dashboard rebuilds reports often."""
    if path is None or not Path(path).exists():
        return "unknown"
    stat = Path(path).stat()
    key = (str(Path(path).resolve()), stat.st_size, stat.st_mtime_ns)
    if key not in _DIGESTS:
        with open(path, "rb") as handle:
            _DIGESTS[key] = hashlib.file_digest(handle, "sha256").hexdigest()
    return _DIGESTS[key]


def forget_digests() -> None:
    """Drop the cached file hashes (benchmarks time a cold report)."""
    _DIGESTS.clear()


def trajscope_version() -> str:
    """The installed trajscope version."""
    try:
        return importlib.metadata.version("trajscope")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


@dataclass
class ReportContext:
    """The runs of one report and how its tables group them (`by`: per dataset, or pooled)."""

    con: duckdb.DuckDBPyConnection
    runs: list[RunInfo]
    by: str = "dataset"
    warehouse_hash: str = "unknown"
    version: str = "unknown"
    sweep: str | None = None
    human_labels: dict[tuple[str, str], bool] = field(default_factory=dict)  # (run_id, question_id) -> right
    _outcomes: dict[str, pl.DataFrame] | None = field(default=None, repr=False)
    _results: dict[tuple, pl.DataFrame] = field(default_factory=dict, repr=False)

    def query(self, name: str, **params: Any) -> pl.DataFrame:
        """warehouse/report/<name>.sql over the chosen runs ($runs) and params, run once per report."""
        params.setdefault("runs", self.run_ids)
        key = (name, tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in params.items())))
        if key not in self._results:
            self._results[key] = frame(self.con, sql_file(name), params)
        return self._results[key]

    def outcomes(self) -> dict[str, pl.DataFrame]:
        """Per-trajectory outcomes (report_outcomes.sql) of every chosen run, by run id; fetched once."""
        if self._outcomes is None:
            df = frame(self.con, sql_file("report_outcomes"), {"runs": self.run_ids})
            parts = df.partition_by("run_id", as_dict=True) if df.height else {}
            self._outcomes = {key[0]: part for key, part in parts.items()}
            for run_id in self.run_ids:
                self._outcomes.setdefault(run_id, df.clear())
        return self._outcomes

    @property
    def run_ids(self) -> list[str]:
        """Chosen run ids in the order given."""
        return [r.run_id for r in self.runs]

    def group_key(self, run: RunInfo) -> str:
        """The row group a run belongs to: its dataset, or one pooled group."""
        return run.dataset if self.by == "dataset" else POOLED

    def groups(self, runs: Iterable[RunInfo] | None = None) -> dict[str, list[RunInfo]]:
        """Runs by group key, groups in first-seen order."""
        out: dict[str, list[RunInfo]] = {}
        for run in self.runs if runs is None else runs:
            out.setdefault(self.group_key(run), []).append(run)
        return out

    def footnote(self, runs: Iterable[RunInfo], n: int, extra: str = "") -> str:
        """n, runs and seeds, trajscope version and warehouse hash: where the numbers came from."""
        runs = list(runs)
        seeds = sorted({r.seed for r in runs if r.seed is not None})
        seed_text = ", ".join(str(s) for s in seeds) if seeds else "none recorded"
        text = (
            f"n = {n:,} trajectories from {len(runs)} run(s); seeds: {seed_text}; "
            f"trajscope {self.version}; warehouse sha256:{self.warehouse_hash[:16]}."
        )
        return f"{extra} {text}".strip() if extra else text


def load_context(
    con: duckdb.DuckDBPyConnection,
    run_ids: list[str],
    *,
    by: str = "dataset",
    db_path: str | Path | None = None,
    sweep: str | None = None,
    human_labels: dict[tuple[str, str], bool] | None = None,
) -> ReportContext:
    """The chosen runs (each must exist), grouped `by` dataset or pooled, with the provenance facts."""
    if by not in BY_CHOICES:
        raise ReportError(f"unknown grouping {by!r}; choose one of {', '.join(BY_CHOICES)}")
    if not run_ids:
        raise ReportError("no runs given: name them with --runs RUN... or --matrix FILE")
    rows = frame(con, sql_file("report_runs"), {"runs": list(dict.fromkeys(run_ids))})
    found = {r["run_id"]: r for r in rows.iter_rows(named=True)}
    missing = [r for r in run_ids if r not in found]
    if missing:
        raise ReportError(
            f"no run {', '.join(repr(m) for m in missing)} in the warehouse "
            '(`trajscope sql "SELECT run_id FROM runs"` lists them)'
        )
    runs = [RunInfo(**{k: found[r][k] for k in RunInfo.__dataclass_fields__}) for r in dict.fromkeys(run_ids)]
    return ReportContext(con, runs, by, file_digest(db_path), trajscope_version(), sweep, dict(human_labels or {}))


__all__ = [
    "BY_CHOICES",
    "POOLED",
    "ReportContext",
    "ReportError",
    "RunInfo",
    "file_digest",
    "frame",
    "load_context",
    "sql_file",
    "trajscope_version",
]
