"""Export: any named view or table to CSV, Parquet, LaTeX (booktabs) or Markdown; a figure to PNG/SVG."""
from __future__ import annotations

import altair as alt
import polars as pl
import streamlit as st

from trajscope.app.console import run_export_query
from trajscope.app.ui import (
    app_config,
    figure_downloads,
    page_header,
    require_warehouse,
    set_url,
    shown_refusal,
    sql_expander,
    url_int,
    url_value,
    warehouse_stamp,
)
from trajscope.warehouse.export import to_csv, to_latex, to_markdown, to_parquet

# Measures a paper figure usually plots, best first; settings columns (temperature, top_k) vary least.
_MEASURES = ("accuracy", "em", "contain_acc", "llm_acc", "f1", "p_disc", "p_post", "hop_evidence_recall",
             "delta", "share", "n_failures", "n")


def default_y(df: pl.DataFrame, numeric: list[str]) -> str:
    """The y a figure of this table starts with: a known measure, else the first column that varies."""
    for name in _MEASURES:
        if name in numeric:
            return name
    varying = [c for c in numeric if df[c].n_unique() > 1]
    return (varying or numeric)[0]


page_header("Export", "Any view or table for the paper: CSV, Parquet, LaTeX (booktabs), Markdown; and a "
            "figure of it as PNG or SVG. Every figure on the other pages has its own PNG/SVG buttons.")

TABLES = ("runs", "questions", "trajectories", "steps", "candidates", "reads", "register_events",
          "judgments", "chunks")
FORMATS = {"CSV": ("csv", "text/csv"), "Parquet": ("parquet", "application/vnd.apache.parquet"),
           "LaTeX (booktabs)": ("tex", "application/x-tex"), "Markdown": ("md", "text/markdown")}


@st.cache_data(max_entries=16, show_spinner="Querying…")
def _export_rows(db_path: str, stamp: tuple[int, ...], source: str, where: str, limit: int):
    # Reused across reruns (format, chart settings) while the warehouse is unchanged; refusals are not cached.
    config = app_config()
    return run_export_query(db_path, source, where, limit, limits=config.console_limits())


def _render(df: pl.DataFrame, fmt: str, caption: str) -> bytes:
    if fmt == "CSV":
        return to_csv(df).encode()
    if fmt == "Parquet":
        return to_parquet(df)
    if fmt == "Markdown":
        return to_markdown(df).encode()
    return to_latex(df, caption=caption).encode()


state = require_warehouse()
if state:
    sources = [*sorted(state.views), *TABLES]
    current = url_value("source")
    fallback = "run_summary" if "run_summary" in sources else sources[0]
    source = st.selectbox("View or table", sources, key="export-source",
                          index=sources.index(current if current in sources else fallback))
    set_url("source", source)
    left, right = st.columns([3, 1])
    where = left.text_input("Filter (optional SQL condition)", value=url_value("where") or "",
                            key="export-where", placeholder="e.g. dataset = 'hotpotqa'")
    limit = right.number_input("Row limit", min_value=1, max_value=1_000_000,
                               value=url_int("limit", 100_000, 1, 1_000_000), step=1000, key="export-limit")
    set_url("where", where.strip() or None)
    set_url("limit", None if limit == 100_000 else str(limit))
    config = app_config()
    # The filter is SQL a user typed (or a link carried): like the console, it runs only once the user
    # presses Run for that text, then through the same bounded read path.
    if left.button("Run filter", key="export-run", disabled=not where.strip()):
        st.session_state["export-applied"] = where.strip()
    pending = bool(where.strip()) and st.session_state.get("export-applied") != where.strip()
    result = None
    if pending:
        st.info("The filter runs when you press **Run filter**.", icon=":material/play_arrow:")
    else:
        result = shown_refusal(lambda: _export_rows(str(config.db_path), warehouse_stamp(config.db_path), source,
                                                    where, int(limit)))
    if result is not None:
        st.markdown(f"**{result.df.height:,} row(s)** of `{source}`")
        st.dataframe(result.df.head(1000), hide_index=True, key="export-preview")
        sql_expander(result.sql, seconds=result.seconds)
        fmt = st.radio("Table format", list(FORMATS), horizontal=True, key="export-format")
        ext, mime = FORMATS[fmt]
        frame = result.df
        st.download_button(
            f"Download {fmt}", data=lambda: _render(frame, fmt, f"{source} (trajscope)"),
            file_name=f"{source}.{ext}", mime=mime, type="primary", key="export-download",
            on_click="ignore", icon=":material/download:",
        )

        st.divider()
        st.subheader("Figure of this table")
        numeric = [c for c, t in result.df.schema.items() if t.is_numeric()]
        if not numeric or result.df.height == 0:
            st.caption("This table has no numeric column to draw.")
        else:
            columns = result.df.columns
            c1, c2, c3, c4 = st.columns(4)
            mark = c1.selectbox("Mark", ["bar", "point", "line"], key="export-mark")
            x = c2.selectbox("x", columns, key="export-x")
            y = c3.selectbox("y", numeric, index=numeric.index(default_y(result.df, numeric)), key="export-y")
            color = c4.selectbox("Colour", [None, *columns], key="export-color",
                                 format_func=lambda c: "—" if c is None else c)
            data = result.df.head(5000)
            chart = getattr(alt.Chart(data), f"mark_{mark}")().encode(
                x=alt.X(x), y=alt.Y(y), **({"color": alt.Color(color)} if color else {}),
                tooltip=list(dict.fromkeys([x, y, *( [color] if color else [])])),
            ).properties(width=600, height=320, title=f"{y} by {x} ({source})")
            st.altair_chart(chart, key="export-chart")
            figure_downloads(chart, key="export", stem=source)
