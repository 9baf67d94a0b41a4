"""Warehouse: a warehouse file for a notebook, every read through the CLI's sandboxed read path and its limits."""
from __future__ import annotations

import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import polars as pl

from trajscope.warehouse import DEFAULT_LIMITS, ReadLimits

from ._agreement import agreement_tables, human_agreement_tables
from ._compare import compare_tables
from ._limits import statistics_limits
from ._replay import Replay
from ._report import PaperReport, report_result, report_tables
from ._results import AgreementResult, CaptionedTable, CompareResult, FunnelResult
from ._views import UnknownView, describe, listed_views


def _quoted(identifier: str) -> str:
    return '"' + identifier.replace('"', '""') + '"'


def _warn_if_cut(truncated: bool, limits: ReadLimits) -> None:
    if truncated:
        warnings.warn(f"the result stopped at the row limit of {limits.max_rows:,} rows; pass "
                      "limits=ReadLimits(max_rows=...) to trajscope.open or narrow the query", stacklevel=3)


class Warehouse:
    """A warehouse opened to read: each call opens it read-only in the sandbox, runs, and closes it again
    (DuckDB locks the file, so nothing holds it between calls and an ingest elsewhere can proceed)."""

    def __init__(self, path: str | Path | None = None, *, limits: ReadLimits = DEFAULT_LIMITS) -> None:
        from trajscope.warehouse import default_db_path, open_read

        self.path: Path = Path(path) if path else default_db_path()
        self.limits = limits
        # Opened once now, so a file that is not a warehouse (or an old one that must be brought up to date,
        # which the read path does) is met here, not at the first query.
        with open_read(self.path, limits=limits):
            pass

    def __repr__(self) -> str:
        return f"Warehouse({str(self.path)!r})"

    def views(self) -> pl.DataFrame:
        """Every named view with its one-line description (as `trajscope views --db PATH`)."""
        return pl.DataFrame(listed_views(self.path), schema={"view": pl.String, "description": pl.String},
                            orient="row")

    def columns(self, name: str) -> pl.DataFrame:
        """A view's or table's columns with their types and descriptions (as `trajscope views NAME --db PATH`)."""
        from trajscope.warehouse import open_read

        with open_read(self.path, limits=self.limits) as reader:
            described = describe(reader, name)
        return pl.DataFrame(list(described.columns), schema={"column": pl.String, "type": pl.String,
                                                             "description": pl.String}, orient="row")

    def view(self, name: str, **filters: Any) -> pl.DataFrame:
        """The rows of a view or table, filtered by column: `run_id="base"` (equal) or `run_id=["a", "b"]` (one of)."""
        from trajscope.warehouse import open_read
        from trajscope.warehouse.read import to_polars

        with open_read(self.path, limits=self.limits) as reader:
            columns = [c for c, _, _ in describe(reader, name).columns]
            unknown = sorted(set(filters) - set(columns))
            if unknown:
                raise UnknownView(f"{name} has no column {', '.join(unknown)}; its columns: {', '.join(columns)}")
            clauses, params = [], {}
            for k, (column, value) in enumerate(filters.items()):
                many = isinstance(value, (list, tuple, set, frozenset))
                clauses.append(f"list_contains($p{k}, {_quoted(column)})" if many else f"{_quoted(column)} = $p{k}")
                params[f"p{k}"] = list(value) if many else value
            where = f" WHERE {' AND '.join(clauses)}" if clauses else ""
            fetched = reader.fetch(f"SELECT * FROM {_quoted(name)}{where}", params or None)
        _warn_if_cut(fetched.truncated, self.limits)
        return to_polars(fetched.table)

    def sql(self, query: str, params: Sequence[Any] | dict[str, Any] | None = None) -> pl.DataFrame:
        """One read-only SELECT (as `trajscope sql`), with $name or ? parameters bound from params."""
        from trajscope.warehouse import open_read, run_read_query
        from trajscope.warehouse.read import to_polars

        if params is None:  # the CLI's path: in a query worker whose memory is bounded
            result = run_read_query(self.path, query, limits=self.limits)
            _warn_if_cut(result.truncated, self.limits)
            return result.df
        with open_read(self.path, limits=self.limits) as reader:
            fetched = reader.fetch(query, params if isinstance(params, dict) else list(params))
        _warn_if_cut(fetched.truncated, self.limits)
        return to_polars(fetched.table)

    def compare(self, run_a: str, run_b: str, *, metric: str | None = None, rubric: str | None = None,
                strata: str | None = None, zero_read: bool = False, margin: float | None = None,
                table4: bool = False, funnel: bool = False, resamples: int = 1000, seed: int = 42,
                timeout_s: float | None = None) -> CompareResult:
        """Run B against run A paired by question id, as `trajscope compare` (same options, same numbers)."""
        from trajscope.format import DEFAULT_COMPARE_METRIC

        return compare_tables(self.path, run_a, run_b, metric=metric or DEFAULT_COMPARE_METRIC,
                              limits=statistics_limits(timeout_s or self.limits.timeout_s), rubric=rubric,
                              strata=strata, zero_read=zero_read, margin=margin, table4=table4, funnel=funnel,
                              resamples=resamples, seed=seed)

    def report(self, paper: str, runs: Sequence[str] = (), *, by: str = "dataset", sweep: str | None = None,
               human_labels: dict[tuple[str, str], bool] | None = None, tables: Sequence[str] = (),
               timeout_s: float | None = None) -> PaperReport:
        """A paper's tables (read-gate, execution-rag, audit) over runs, as `trajscope report`."""
        limits = statistics_limits(timeout_s or self.limits.timeout_s)
        built = report_tables(self.path, paper, list(runs), limits=limits, by=by, sweep=sweep,
                              human_labels=human_labels, only=tables)
        return report_result(paper, built)

    def agreement(self, runs: Sequence[str] = (), *, robustness: tuple[str, str] | None = None,
                  human: str | None = None, method: str | None = None) -> AgreementResult:
        """Kappa between extractors and judges pooled over runs (every run when none), or with human=RUN each
        attribution method against people's first errors, as `trajscope agreement`."""
        if human is not None:
            return human_agreement_tables(self.path, human, method)
        return agreement_tables(self.path, list(runs) or None, robustness)

    def funnel(self, *runs: str, paired: bool = False) -> FunnelResult:
        """The evidence funnel of runs (every run when none) per run, hop and question type; paired=True with two
        runs: each stage paired by question with McNemar's exact p (as `trajscope compare A B --funnel`)."""
        from trajscope.analysis.queries import FUNNEL_STAGES, compare_funnels
        from trajscope.app.charts import readable_run_names
        from trajscope.app.queries import funnel_summary_sql, run_choices_sql
        from trajscope.warehouse import open_read

        if paired:
            if len(runs) != 2:
                raise ValueError(f"a paired funnel compares two runs, got {len(runs)}")
            with open_read(self.path, limits=self.limits) as reader:
                stages = compare_funnels(reader, runs[0], runs[1])  # type: ignore[arg-type]
            caption = f"Evidence funnel ({runs[1]} vs {runs[0]}), paired by question: delta = B - A, McNemar exact p"
            return FunnelResult((CaptionedTable(caption, stages.frame),), stages=FUNNEL_STAGES, paired=True)
        with open_read(self.path, limits=self.limits) as reader:
            known = reader.frame(run_choices_sql())
            chosen = list(runs) or sorted(known["run_id"].to_list())
            frame = reader.frame(funnel_summary_sql(chosen)) if chosen else pl.DataFrame()
        if frame.height:  # each run also by its readable name, as the dashboard's legends show it
            names = readable_run_names(known, chosen)
            frame = frame.with_columns(run=pl.col("run_id").replace_strict(names, return_dtype=pl.String))
        caption = "Evidence funnel: share of gold passages queried for, retrieved, shown, read and used"
        return FunnelResult((CaptionedTable(caption, frame),), stages=FUNNEL_STAGES)

    def replay(self, trajectory_id: str) -> Replay:
        """One trajectory's question, gold, answer, verdicts and steps; displays inline in a notebook."""
        from trajscope.app.queries import replay_header_sql, replay_steps_sql
        from trajscope.warehouse import open_read

        with open_read(self.path, limits=self.limits) as reader:
            header = reader.frame(replay_header_sql(trajectory_id))
            steps = reader.frame(replay_steps_sql(trajectory_id))
        if header.height == 0:
            raise LookupError(f"no trajectory {trajectory_id!r} in {self.path}")
        return Replay(trajectory_id, header.row(0, named=True), steps)


def open(path: str | Path | None = None, *, limits: ReadLimits = DEFAULT_LIMITS) -> Warehouse:  # noqa: A001
    """The warehouse at path ($TRAJSCOPE_DB or ./trajscope.duckdb when None), read-only in the CLI's sandbox."""
    return Warehouse(path, limits=limits)


__all__ = ["Warehouse", "open"]
