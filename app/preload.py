"""Every library the pages draw with, imported once before any page runs.

Streamlit runs each session's page on a thread of its own; on a cold server, pages first importing pandas through
altair, polars and Streamlit at the same moment met pandas half-initialised (no attribute 'Timestamp').
"""
from __future__ import annotations

import importlib

# Third-party modules the pages and Streamlit's chart and table elements import lazily, in dependency order.
LIBRARIES = (
    "numpy", "pyarrow", "pandas", "narwhals", "polars", "duckdb", "msgspec", "altair", "vl_convert",
    "streamlit.dataframe_util", "streamlit.elements.vega_charts", "streamlit.elements.arrow",
    "narwhals._interchange.series",  # what altair reads a chart's columns through on some pages
)
# The dashboard's own packages: importing them imports the warehouse and format layers the pages read through.
DASHBOARD_PACKAGES = (
    "access", "bundle", "charts", "console", "jobs", "progress", "queries", "replay", "ui", "upload",
)


def import_page_libraries() -> None:
    """Import LIBRARIES this install has and the dashboard's packages (each a no-op once imported)."""
    for name in LIBRARIES:
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as missing:
            if missing.name != name:  # an older Streamlit or altair without this module has nothing of it to race
                raise
    for name in DASHBOARD_PACKAGES:
        importlib.import_module(f"trajscope.app.{name}")


def compile_sample_charts() -> None:
    """Compile a chart from a polars and from a pandas frame: altair imports its per-backend readers on first use."""
    import altair as alt
    import pandas as pd
    import polars as pl

    for frame in (pl.DataFrame({"x": [1], "when": ["2025-01-01"]}), pd.DataFrame({"x": [1], "when": ["2025-01-01"]})):
        alt.Chart(frame).mark_point().encode(x="x:Q", y="when:T").to_dict()


import_page_libraries()
compile_sample_charts()
