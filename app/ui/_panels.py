"""A table or figure with its "Show SQL" expander and its downloads."""
from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import altair as alt
import polars as pl
import streamlit as st

from trajscope.app.access import QueryResult
from trajscope.app.charts import chart_to_png, chart_to_svg
from trajscope.warehouse.export import to_csv, to_latex, to_markdown, to_parquet

_TABLE_FORMATS = (
    ("CSV", "csv", "text/csv", to_csv),
    ("Parquet", "parquet", "application/vnd.apache.parquet", to_parquet),
    ("LaTeX", "tex", "application/x-tex", to_latex),
    ("Markdown", "md", "text/markdown", to_markdown),
)


def sql_expander(sql: str, *, seconds: float | None = None) -> None:
    """The exact SQL a figure or table ran, ready to paste into the SQL console."""
    label = "Show SQL" if seconds is None else f"Show SQL  ·  {seconds * 1000:.0f} ms"
    with st.expander(label):
        st.code(sql.strip(), language="sql")


def table_exports(df: pl.DataFrame, *, key: str, stem: str) -> None:
    """Download buttons: CSV, Parquet, LaTeX (booktabs) and Markdown, rendered only when clicked."""
    with st.container(horizontal=True, gap="small"):
        for label, ext, mime, render in _TABLE_FORMATS:
            st.download_button(
                label, data=functools.partial(render, df), file_name=f"{stem}.{ext}", mime=mime,
                key=f"{key}-dl-{ext}", on_click="ignore", icon=":material/download:", width="content",
            )


def table_panel(
    result: QueryResult,
    *,
    key: str,
    stem: str,
    column_config: Mapping[str, Any] | None = None,
    height: int | Literal["auto", "stretch", "content"] = "auto",
    exports: bool = True,
) -> None:
    """A dataframe of the query result, its SQL, and its exports."""
    st.dataframe(result.df, hide_index=True, column_config=column_config, height=height,
                 key=f"{key}-table")
    sql_expander(result.sql, seconds=result.seconds)
    if exports:
        table_exports(result.df, key=key, stem=stem)


# What st.altair_chart draws: any top-level Altair chart.
Figure = (alt.Chart | alt.LayerChart | alt.FacetChart | alt.HConcatChart | alt.VConcatChart | alt.ConcatChart
          | alt.RepeatChart)


def figure_panel(
    chart: Figure,
    results: QueryResult | Sequence[QueryResult],
    *,
    key: str,
    stem: str,
    selectable: bool = False,
) -> Any:
    """An Altair figure, the SQL of every query it draws, and PNG / SVG downloads; returns the selection."""
    event: Any = (st.altair_chart(chart, key=f"{key}-chart", on_select="rerun") if selectable
                  else st.altair_chart(chart, key=f"{key}-chart"))
    for result in [results] if isinstance(results, QueryResult) else results:
        sql_expander(result.sql, seconds=result.seconds)
    figure_downloads(chart, key=key, stem=stem)
    return event


def figure_downloads(chart: alt.TopLevelMixin, *, key: str, stem: str) -> None:
    """PNG and SVG download buttons of a figure, rendered only when clicked."""
    with st.container(horizontal=True, gap="small"):
        st.download_button("PNG", data=lambda: chart_to_png(chart), file_name=f"{stem}.png",
                           mime="image/png", key=f"{key}-png", on_click="ignore",
                           width="content")
        st.download_button("SVG", data=lambda: chart_to_svg(chart), file_name=f"{stem}.svg",
                           mime="image/svg+xml", key=f"{key}-svg", on_click="ignore",
                           width="content")
