"""What a report is built from: the chosen runs, their grouping, the SQL files and the provenance footnote."""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import json
import os
import time
import warnings
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import duckdb
import polars as pl

from trajscope.runtime import cache_dir
from trajscope.warehouse import Sha256Child

if TYPE_CHECKING:
    from trajscope.warehouse.read import Reader

    from ._table import ReportTable

BY_CHOICES = ("dataset", "none")
POOLED = "all"
# Run parameters that split a report's groups where they differ among one dataset's runs: a study has several
# models and efforts per dataset, and arms pair and pool only within one setting. Condition and controller are
# the arms, seeds pool; the embedding backbone is ExecutionRAG's own axis (its tables split by it).
GROUP_PARAMS = ("model", "reasoning_effort", "temperature", "max_tokens", "retriever_kind", "top_k")


class ReportError(ValueError):
    """A report asked for something the warehouse does not hold (a run id, a parameter)."""


@functools.cache
def sql_file(name: str) -> str:
    """The text of trajscope/analysis/report/<name>.sql (first line: its one-line description)."""
    return (resources.files("trajscope.analysis.report") / f"{name}.sql").read_text()


def frame(con: duckdb.DuckDBPyConnection | Reader, sql: str, params: dict[str, Any] | None = None) -> pl.DataFrame:
    """A query's result as a polars frame (through Arrow, no per-row Python objects)."""
    cursor = con.execute(sql, params or {})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # DuckDB notes the extra copy of a DB-API result; it is small here
        # An Arrow table converts to a frame; pyarrow ships no hints, so polars cannot pick that overload.
        return cast(pl.DataFrame, pl.from_arrow(cursor.to_arrow_table()))


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
    temperature: float | None = None
    max_tokens: int | None = None
    retriever_kind: str | None = None
    top_k: int | None = None

    @property
    def method(self) -> str:
        """controller:condition, the row label of a method."""
        return f"{self.controller or '?'}:{self.condition or '?'}"


_DIGESTS: dict[tuple, str] = {}
# A file changed less than this long ago is hashed but its digest not kept on disk (git's "racily clean" rule).
RACY_WINDOW_NS = 2_000_000_000


def _file_version(path: Path) -> tuple:
    """What identifies one version of a file's bytes: path, device, inode, size, and the modification and
    status-change times (any write moves both; the change time cannot be set back by a user, unlike mtime)."""
    stat = path.stat()
    return (str(path.resolve()), stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)


def _digest_cache(path: Path) -> Path:
    """$TRAJSCOPE_CACHE/file_digests/<sha256 of the resolved path>.json: the last digest computed of that file."""
    root = cache_dir() / "file_digests"
    return root / f"{hashlib.sha256(str(path.resolve()).encode()).hexdigest()}.json"


def _cached_digest(path: Path, version: tuple) -> str | None:
    try:
        entry = json.loads(_digest_cache(path).read_text())
    except (OSError, ValueError):
        return None
    return entry.get("digest") if entry.get("version") == list(version) else None


def _store_digest(path: Path, version: tuple, digest: str) -> None:
    cache = _digest_cache(path)
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache.with_name(f"{cache.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"version": list(version), "digest": digest}))
        tmp.replace(cache)  # write-then-rename: a reader sees the old entry or the new one, never half
    except OSError:
        pass  # a read-only cache only costs the next report the hash again


def file_digest(path: str | Path | None) -> str:
    """sha256 of the warehouse file (the footnote's pointer to exactly what was read); computed once per
    file version (_file_version) and kept in the process and in $TRAJSCOPE_CACHE, as hashing a 1M-trajectory
    warehouse (1.9 GB) takes seconds and a dashboard or a shell rebuilds reports of an unchanged file often."""
    return str(PendingDigest(path))


class PendingDigest:
    """file_digest of a file, hashed (when no kept digest names its version) by a child process started now, so
    a report's queries run meanwhile: at 1M the hash took 1.5 s of a 5.8 s first report. str() waits for it."""

    def __init__(self, path: str | Path | None):
        self._value: str | None = None
        self._child: Sha256Child | None = None
        if path is None or not Path(path).exists():
            self._value = "unknown"
            return
        self._path = Path(path)
        self._version = _file_version(self._path)
        self._value = _DIGESTS.get(self._version) or _cached_digest(self._path, self._version)
        if self._value is None:
            self._child = Sha256Child(self._path)  # a child: a read here could cost a connection its lock
        else:
            _DIGESTS[self._version] = self._value

    def __str__(self) -> str:
        if self._value is None:
            assert self._child is not None
            digest, self._child = self._child.result(), None
            # Stored only if the file did not change while it was read, and not within the racy window: file
            # times tick coarsely, so a write just after an earlier one could leave the same version behind.
            if _file_version(self._path) == self._version and time.time_ns() - self._version[-1] > RACY_WINDOW_NS:
                _store_digest(self._path, self._version, digest)
            _DIGESTS[self._version] = self._value = digest
        return self._value

    def __del__(self) -> None:
        child = getattr(self, "_child", None)
        if child is not None:  # never read (the report failed): stop hashing
            child.cancel()


# Where a footnote names the warehouse's hash until with_warehouse_hash fills it in: the tables are built while
# the hash is computed.
HASH_MARK = "\ufffcwarehouse-sha256\ufffc"


def with_warehouse_hash(tables: list[ReportTable], digest: str | PendingDigest) -> list[ReportTable]:
    """The tables with HASH_MARK in their footnotes replaced by the warehouse's hash (waiting for it if pending)."""
    short = str(digest)[:16]
    return [t.with_footnote(t.footnote.replace(HASH_MARK, short)) if HASH_MARK in t.footnote else t for t in tables]


def forget_digests(*paths: str | Path) -> None:
    """Drop the cached file hashes: this process's, and on disk those of `paths` and of every file this process
    hashed (benchmarks time a cold report)."""
    for path in {*(str(p) for p in paths), *(version[0] for version in _DIGESTS)}:
        _digest_cache(Path(path)).unlink(missing_ok=True)
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
    warehouse_hash: str | PendingDigest = "unknown"  # read at the footnote, so the hash overlaps the queries
    version: str = "unknown"
    sweep: str | None = None
    human_labels: dict[tuple[str, str], bool] = field(default_factory=dict)  # (run_id, question_id) -> right
    _outcomes: dict[str, pl.DataFrame] | None = field(default=None, repr=False)
    _results: dict[tuple, pl.DataFrame] = field(default_factory=dict, repr=False)

    def query(self, name: str, **params: Any) -> pl.DataFrame:
        """trajscope/analysis/report/<name>.sql over the chosen runs ($runs) and params, run once per report."""
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

    def dataset_key(self, run: RunInfo) -> str:
        """The dataset part of a run's group: its dataset, or one pooled group."""
        return run.dataset if self.by == "dataset" else POOLED

    def differing_params(self, dataset_key: str, across: tuple[str, ...] = ()) -> tuple[str, ...]:
        """The GROUP_PARAMS whose values differ among the chosen runs of one dataset (those in `across` kept
        together: a sweep's own parameter)."""
        runs = [r for r in self.runs if self.dataset_key(r) == dataset_key]
        return tuple(p for p in GROUP_PARAMS if p not in across and len({getattr(r, p) for r in runs}) > 1)

    def group_settings(self, run: RunInfo, across: tuple[str, ...] = ()) -> dict[str, object]:
        """The run's values of the parameters that split its dataset's runs into groups."""
        return {p: getattr(run, p) for p in self.differing_params(self.dataset_key(run), across)}

    def group_key(self, run: RunInfo, across: tuple[str, ...] = ()) -> str:
        """The row group a run belongs to: its dataset (or one pooled group) and, where a dataset's runs differ in
        a GROUP_PARAMS setting, that setting: `hotpotqa [model=qwen-7b, reasoning_effort=minimal]`."""
        settings = self.group_settings(run, across)
        if not settings:
            return self.dataset_key(run)
        return f"{self.dataset_key(run)} [{', '.join(f'{k}={v}' for k, v in settings.items())}]"

    def groups(self, runs: Iterable[RunInfo] | None = None, *, across: tuple[str, ...] = ()) -> dict[
            str, list[RunInfo]]:
        """Runs by group key, groups in first-seen order; arms are paired and pooled only within a group."""
        out: dict[str, list[RunInfo]] = {}
        for run in self.runs if runs is None else runs:
            out.setdefault(self.group_key(run, across), []).append(run)
        return out

    def grouping_note(self) -> str | None:
        """Which groups the report made, where some dataset's runs differ in a run parameter; None otherwise."""
        split = {d: self.differing_params(d) for d in dict.fromkeys(self.dataset_key(r) for r in self.runs)}
        if not any(split.values()):
            return None
        made = "; ".join(f"{key} ({len(runs)} run(s))" for key, runs in self.groups().items())
        params = sorted({p for ps in split.values() for p in ps}, key=GROUP_PARAMS.index)
        return (f"Groups: runs of a dataset that differ in {', '.join(params)} are kept apart, and arms pair and "
                f"pool only within a group: {made}.")

    def footnote(self, runs: Iterable[RunInfo], n: int, extra: str = "") -> str:
        """n, runs and seeds, trajscope version and warehouse hash: where the numbers came from."""
        runs = list(runs)
        seeds = sorted({r.seed for r in runs if r.seed is not None})
        seed_text = ", ".join(str(s) for s in seeds) if seeds else "none recorded"
        text = (
            f"n = {n:,} trajectories from {len(runs)} run(s); seeds: {seed_text}; "
            f"trajscope {self.version}; warehouse sha256:{HASH_MARK}."
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
    return ReportContext(con, runs, by, PendingDigest(db_path), trajscope_version(), sweep,
                         dict(human_labels or {}))


__all__ = [
    "BY_CHOICES",
    "GROUP_PARAMS",
    "POOLED",
    "ReportContext",
    "ReportError",
    "RunInfo",
    "HASH_MARK",
    "PendingDigest",
    "file_digest",
    "with_warehouse_hash",
    "frame",
    "load_context",
    "sql_file",
    "trajscope_version",
]
