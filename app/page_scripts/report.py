"""Report: a paper's tables over chosen runs, with their SQL, as LaTeX / Markdown / CSV, and the figures."""

from __future__ import annotations

import functools
from collections.abc import Sequence

import duckdb
import polars as pl
import streamlit as st
import vl_convert

from trajscope.analysis.report import (
    PAPERS,
    ReportError,
    ReportTable,
    build_report,
    format_cell,
    latex_document,
    render,
    render_all,
    report_figures,
)
from trajscope.app.access import read_connection
from trajscope.app.ui import (
    app_config,
    fetch,
    fill_warehouse_help,
    page_header,
    set_url,
    show_error,
    url_choice,
    url_list,
    url_value,
)
from trajscope.warehouse import WarehouseBusy

page_header(
    "Report",
    "A paper's tables filled from the warehouse, with the papers' rows, columns and captions; "
    "each table shows the SQL it came from and downloads as LaTeX, Markdown or CSV.",
)

# The formats a table and the whole report download as: render format, file ending, MIME type, button label.
FORMATS = (
    ("latex", "tex", "text/x-tex", "LaTeX"),
    ("markdown", "md", "text/markdown", "Markdown"),
    ("csv", "csv", "text/csv", "CSV"),
)


def _whole_report(tables: Sequence[ReportTable], fmt: str, paper: str) -> str:
    """Every table in one file: LaTeX as one compilable document, the other formats table after table."""
    return latex_document(tables, f"trajscope report: {paper}") if fmt == "latex" else render_all(tables, fmt)


PAPER_LABELS = {
    "read-gate": "Read-Gate (Before Reasoning Can Fail)",
    "execution-rag": "ExecutionRAG",
    "audit": "Answer-presence audit",
}

config = app_config()
if not config.db_path.exists():
    fill_warehouse_help(config, exists=False)
    st.stop()

papers = list(PAPERS)
chosen_paper = url_choice("paper", papers, papers[0])
paper = (
    st.segmented_control(
        "Paper",
        papers,
        format_func=PAPER_LABELS.__getitem__,
        key="report-paper",
        default=chosen_paper if chosen_paper in papers else papers[0],
    )
    or papers[0]
)
if paper == "audit":
    options_sql = "SELECT DISTINCT audit_id AS id FROM audit_records ORDER BY id"
    label, help_text = "Audit ids (none: every audit record)", "The audit report groups records by cell."
else:
    options_sql = (
        "SELECT run_id AS id, dataset, controller, condition FROM runs ORDER BY dataset, controller, condition, run_id"
    )
    label, help_text = "Runs", "Conditions pair on question ids; several runs of one condition are seeds."
options = fetch(options_sql)
ids = options.df["id"].to_list() if options is not None else []
if paper != "audit" and not ids:
    fill_warehouse_help(config, exists=True)
    st.stop()
default = [r for r in url_list("runs") if r in ids] or (ids if paper != "audit" and len(ids) <= 12 else [])
columns = st.columns([3, 1, 1])
with columns[0]:
    runs = st.multiselect(label, ids, default=default, help=help_text, key=f"report-runs-{paper}")
with columns[1]:
    by = st.radio(
        "Rows",
        ["dataset", "none"],
        format_func={"dataset": "per dataset", "none": "pooled"}.get,
        key="report-by",
        horizontal=True,
    )
with columns[2]:
    sweep = (
        st.text_input(
            "Sweep parameter (Read-Gate T5)",
            value=url_value("sweep") or "",
            key="report-sweep",
            disabled=paper != "read-gate",
            placeholder="reasoning_effort",
        )
        or None
    )
set_url("paper", paper)
set_url("runs", runs)
set_url("sweep", sweep)

if paper != "audit" and not runs:
    st.info("Pick the runs the report covers.", icon=":material/checklist:")
    st.stop()

try:
    with read_connection(config.db_path, lock_wait_s=config.lock_wait_s) as con:
        tables = build_report(con, paper, runs, by=by, db_path=config.db_path, sweep=sweep)
except WarehouseBusy as exc:
    st.warning(str(exc), icon=":material/hourglass_top:")
    st.stop()
except ReportError as exc:
    show_error(str(exc), icon=":material/warning:")
    st.stop()
except duckdb.Error as exc:
    show_error(f"The report's queries failed: {str(exc).splitlines()[0]}", icon=":material/warning:")
    st.stop()

stem = f"report-{paper}"
with st.container(horizontal=True, gap="small"):
    for fmt, ext, mime, label in FORMATS:
        st.download_button(
            "Whole report, LaTeX" if fmt == "latex" else label,
            data=functools.partial(_whole_report, tables, fmt, paper),
            file_name=f"{stem}.{ext}",
            mime=mime,
            on_click="ignore",
            key=f"report-all-{ext}",
            icon=":material/download:",
        )

for figure in report_figures(tables):
    st.subheader(f"{figure.title}. {figure.caption}")
    st.vega_lite_chart(figure.spec, key=f"report-figure-{figure.name}")
    with st.container(horizontal=True, gap="small"):
        st.download_button(
            "PNG",
            data=functools.partial(vl_convert.vegalite_to_png, figure.spec, scale=2),
            file_name=f"{figure.name}.png",
            mime="image/png",
            on_click="ignore",
            key=f"report-figure-{figure.name}-png",
        )
        st.download_button(
            "SVG",
            data=functools.partial(vl_convert.vegalite_to_svg, figure.spec),
            file_name=f"{figure.name}.svg",
            mime="image/svg+xml",
            on_click="ignore",
            key=f"report-figure-{figure.name}-svg",
        )

for table in tables:
    st.subheader(f"{table.title}. {table.caption}")
    if table.not_applicable:
        st.info(f"Does not apply: {table.not_applicable}", icon=":material/block:")
    else:
        shown = pl.DataFrame(
            {c.label: [format_cell(row[i], c) for row in table.rows] for i, c in enumerate(table.columns)},
            schema={c.label: pl.String for c in table.columns},
        )
        st.dataframe(shown, hide_index=True, key=f"report-{table.name}")
    for note in (*table.notes, table.footnote):
        if note:
            st.caption(note)
    with st.expander("Show SQL"):
        st.code(table.sql or "-- no SQL: this table is computed from the ones above", language="sql")
    with st.container(horizontal=True, gap="small"):
        for fmt, ext, mime, label in FORMATS:
            st.download_button(
                label,
                data=functools.partial(render, table, fmt),
                file_name=f"{table.name}.{ext}",
                mime=mime,
                on_click="ignore",
                key=f"report-{table.name}-{ext}",
                icon=":material/download:",
            )
