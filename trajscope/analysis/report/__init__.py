"""The three papers' tables from the warehouse: typed tables (caption, columns, rows, footnote, SQL),
one module per paper, rendered to LaTeX booktabs, Markdown and CSV."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import duckdb

from ._audit import audit_report
from ._audit_panels import AUDIT_TABLES, alias_table, audit_tables, identity_table, insertion_table
from ._context import (
    BY_CHOICES,
    POOLED,
    ReportContext,
    ReportError,
    RunInfo,
    file_digest,
    forget_digests,
    load_context,
    sql_file,
    with_warehouse_hash,
)
from ._deviations import DEVIATIONS, Deviation, deviations_for, with_deviation_notes, with_documented_notes
from ._execution_rag import (
    ReportFigure,
    category_figure,
    execution_rag_report,
    failure_distribution_figure,
    method_name,
    pareto_figure,
)
from ._read_gate import (
    failure_plane_figure,
    failure_plane_points,
    gate_corrections_figure,
    read_gate_report,
)
from ._render import (
    EXTENSIONS,
    FORMATS,
    csv_header,
    latex_document,
    render,
    render_all,
    to_csv,
    to_frame,
    to_latex,
    to_markdown,
)
from ._table import KINDS, Column, Interval, ReportTable, WithDelta, csv_cells, does_not_apply, format_cell

PAPERS: dict[str, tuple[str, Callable[[ReportContext], list[ReportTable]] | None]] = {
    "read-gate": ("Before Reasoning Can Fail: Pre-Evidence Procedural Failures in Agentic RAG", read_gate_report),
    "execution-rag": ("ExecutionRAG: a requirement register for multi-hop agentic RAG", execution_rag_report),
    "audit": ("Answer-presence intervention audit of compile-then-read RAG", None),  # cells, not runs
}


def report_figures(tables: list[ReportTable]) -> list[ReportFigure]:
    """The figures drawn from a report's tables (Read-Gate: Figures 6 and 7; ExecutionRAG: Figures 2, 4, 5)."""
    drawers = {"rg_plane": failure_plane_figure, "rg_fig6": gate_corrections_figure, "er_pareto": pareto_figure,
               "er_fig5": category_figure, "er_t13": failure_distribution_figure,
               "er_t15": failure_distribution_figure}
    figures = [drawers[t.name](t) for t in tables if t.name in drawers]
    return [f for f in figures if f is not None]


def build_report(
    con: duckdb.DuckDBPyConnection,
    paper: str,
    run_ids: list[str],
    *,
    by: str = "dataset",
    db_path: str | Path | None = None,
    sweep: str | None = None,
    human_labels: dict[tuple[str, str], bool] | None = None,
) -> list[ReportTable]:
    """Every table of one paper's report over the chosen runs (audit: audit ids or cells; none = all)."""
    if paper == "audit":
        # The audit-report checks (AP §3.1 insertion, the identity re-run, §17's alias spot-check) print here too.
        checks = (insertion_table, identity_table, alias_table)
        return with_documented_notes(audit_report(con, run_ids, db_path, checks))
    if paper not in PAPERS:
        raise ReportError(f"unknown report {paper!r}; choose one of {', '.join(PAPERS)}")
    ctx = load_context(con, run_ids, by=by, db_path=db_path, sweep=sweep, human_labels=human_labels)
    # Every documented deviation is printed under each table it touches (docs/definitions.md).
    build = PAPERS[paper][1]
    assert build is not None  # only the audit entry has no builder, and it returned above
    tables = with_grouping_note(ctx, with_deviation_notes(ctx, build(ctx)))
    return with_warehouse_hash(tables, ctx.warehouse_hash)


def with_grouping_note(ctx: ReportContext, tables: list[ReportTable]) -> list[ReportTable]:
    """Each table that has rows, with the groups the report made where a dataset's runs differ in a setting."""
    note = ctx.grouping_note()
    if note is None:
        return tables
    return [t if t.not_applicable else replace(t, notes=(*t.notes, note)) for t in tables]


__all__ = [
    "AUDIT_TABLES",
    "DEVIATIONS",
    "Deviation",
    "deviations_for",
    "with_deviation_notes",
    "with_grouping_note",
    "BY_CHOICES",
    "EXTENSIONS",
    "FORMATS",
    "KINDS",
    "PAPERS",
    "POOLED",
    "Column",
    "Interval",
    "ReportContext",
    "ReportError",
    "ReportFigure",
    "failure_distribution_figure",
    "failure_plane_figure",
    "failure_plane_points",
    "gate_corrections_figure",
    "ReportTable",
    "RunInfo",
    "WithDelta",
    "audit_tables",
    "build_report",
    "category_figure",
    "csv_cells",
    "csv_header",
    "does_not_apply",
    "file_digest",
    "forget_digests",
    "format_cell",
    "latex_document",
    "load_context",
    "method_name",
    "pareto_figure",
    "render",
    "render_all",
    "report_figures",
    "sql_file",
    "to_csv",
    "to_frame",
    "to_latex",
    "to_markdown",
]
