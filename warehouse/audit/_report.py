"""The paper-style audit tables, rendered as LaTeX, Markdown or CSV."""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import duckdb
import polars as pl

from warehouse.export import to_csv, to_latex, to_markdown

from . import _analysis as analysis

REPORT_FORMATS = ("latex", "markdown", "csv")


@dataclass(frozen=True)
class ReportTable:
    """One table of the report: a stable name, a caption, and its rows with CIs as separate columns."""

    name: str
    caption: str
    frame: pl.DataFrame


def _fmt(value: float | None, digits: int = 2) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "--"
    return f"{value:+.{digits}f}"


def _with_ci(frame: pl.DataFrame, prefixes: Sequence[str]) -> pl.DataFrame:
    # Text tables show "mean [low, high]" in one column, as the paper prints them.
    for prefix in prefixes:
        mean, low, high = f"{prefix}_pts", f"{prefix}_low", f"{prefix}_high"
        if mean not in frame.columns:
            continue
        text = [
            "--" if m is None or math.isnan(m) else f"{_fmt(m)} [{_fmt(lo)}, {_fmt(hi)}]"
            for m, lo, hi in zip(frame[mean], frame[low], frame[high], strict=False)
        ]
        index = frame.columns.index(mean)
        frame = frame.drop([mean, low, high]).insert_column(index, pl.Series(prefix, text, dtype=pl.String))
    return frame


def _bucket_labels(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.rename({"n_0_0": "0->0", "n_0_1": "0->1", "n_1_1": "1->1", "n_1_0": "1->0"})


_SPECS: list[tuple[str, str, Callable[[duckdb.DuckDBPyConnection], pl.DataFrame], Sequence[str]]] = [
    ("cells", "Audit cells: models, records, golds shorter than 2 characters excluded, failed records",
     analysis.cells, ()),
    ("buckets", "Transition buckets (ans_in_b1 -> ans_in_compile) and answer-surfacing rate",
     lambda con: _bucket_labels(analysis.bucket_counts(con)), ()),
    ("causal", "Causal delta on the 1->1 stratum: paired F1 deltas vs the unperturbed compile "
     "(points, 95% bootstrap CI, 1,000 resamples, seed 42); delta_causal = delta_remove - delta_placebo",
     analysis.causal_effects, ("delta_remove", "delta_placebo", "delta_causal")),
    ("insertion", "Insertion in the 0->0 bucket: prepend 'Note: <gold>.' vs midpoint '<gold>.' (F1 points, 95% CI)",
     analysis.insertion_effects, ("prepend", "mid")),
    ("sentinels", "Sentinel panel on ans_in_compile = 1: residual vs raw retrieval (B1) and paired delta vs [MASK] "
     "with the C2a rule", lambda con: analysis.sentinel_audit(con)[0], ("residual_vs_b1", "vs_mask")),
    ("sentinel_verdicts", "Sentinel equivalence: C2a (>= 3/4 alternatives pass) and C2b (placebo) verdicts",
     lambda con: analysis.sentinel_audit(con)[1], ("mask_effect", "placebo")),
    ("identity", "Identity sanity check: reader re-run on unchanged contexts (ans_in_compile = 0)",
     analysis.identity_check, ()),
    ("alias", "Alias spot-check on [MASK]-masked contexts: detector fires and clean-subset masked-vs-B1 lift "
     "(95% CI, 2,000 resamples, seed 42)", analysis.alias_check, ("lift_clean",)),
    ("interventions", "Every (cell, baseline, intervention, sentinel, stratum): reader F1 and paired delta vs "
     "unperturbed (points, 95% CI)", analysis.intervention_effects, ("delta",)),
]
REPORT_TABLES = tuple(name for name, *_ in _SPECS)


def report_tables(con: duckdb.DuckDBPyConnection, names: Sequence[str] | None = None) -> list[ReportTable]:
    """The report's tables (all, or the named ones, in report order) with numeric CI columns."""
    unknown = sorted(set(names or ()) - set(REPORT_TABLES))
    if unknown:
        raise ValueError(f"unknown audit table(s) {', '.join(unknown)}; choose from {', '.join(REPORT_TABLES)}")
    return [
        ReportTable(name, caption, build(con))
        for name, caption, build, _ in _SPECS
        if names is None or name in names
    ]


def render_report(tables: Sequence[ReportTable], fmt: str) -> str:
    """All tables in one document: LaTeX table environments, Markdown sections, or CSV blocks."""
    if fmt not in REPORT_FORMATS:
        raise ValueError(f"unknown report format {fmt!r}; choose one of {', '.join(REPORT_FORMATS)}")
    prefixes = {name: ci for name, _, _, ci in _SPECS}
    parts = []
    for table in tables:
        if fmt == "csv":
            parts.append(f"# {table.name}: {table.caption}\n" + to_csv(table.frame))
            continue
        frame = _with_ci(table.frame, prefixes[table.name])
        if fmt == "latex":
            parts.append(to_latex(frame, caption=table.caption, label=f"tab:audit-{table.name}", float_digits=2))
        else:
            parts.append(f"### {table.caption}\n\n" + (to_markdown(frame, float_digits=2) if frame.height else
                                                      "_no rows_\n"))
    return "\n".join(parts)


__all__ = ["REPORT_FORMATS", "REPORT_TABLES", "ReportTable", "render_report", "report_tables"]
