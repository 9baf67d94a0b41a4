"""Dashboard entry point: `streamlit run app/main.py` (what `trajscope app` starts)."""
from __future__ import annotations

import streamlit as st

# Before any page: sessions' first runs import under one module lock here instead of racing each other in pandas.
import trajscope.app.preload  # noqa: F401
from trajscope.app.ui import app_config

st.set_page_config(page_title="trajscope", page_icon=":material/troubleshoot:", layout="wide")

PAGES = {
    "Explore": [
        # The default page is served at / (Streamlit ignores its url_path), so it is the Overview:
        # every other page keeps its own URL as a deep link (/runs, /replay?trajectory=...).
        st.Page("page_scripts/overview.py", title="Overview", icon=":material/explore:", url_path="overview",
                default=True),
        st.Page("page_scripts/runs.py", title="Runs", icon=":material/table_rows:", url_path="runs"),
        st.Page("page_scripts/failure_plane.py", title="Failure plane", icon=":material/scatter_plot:",
                url_path="failure_plane"),
        st.Page("page_scripts/breakdowns.py", title="Breakdowns", icon=":material/stacked_bar_chart:",
                url_path="breakdowns"),
        st.Page("page_scripts/funnel.py", title="Evidence funnel", icon=":material/filter_alt:",
                url_path="funnel"),
        st.Page("page_scripts/replay.py", title="Trajectory replay", icon=":material/replay:",
                url_path="replay"),
        st.Page("page_scripts/compare.py", title="Compare", icon=":material/compare_arrows:",
                url_path="compare"),
        st.Page("page_scripts/search.py", title="Search", icon=":material/search:", url_path="search"),
        st.Page("page_scripts/audit.py", title="Intervention audit", icon=":material/science:",
                url_path="audit"),
        st.Page("page_scripts/report.py", title="Report", icon=":material/article:", url_path="report"),
    ],
    "Data": [
        st.Page("page_scripts/upload.py", title="Upload", icon=":material/upload_file:", url_path="upload"),
        st.Page("page_scripts/sql_console.py", title="SQL console", icon=":material/terminal:",
                url_path="sql"),
        st.Page("page_scripts/export.py", title="Export", icon=":material/download:", url_path="export"),
    ],
}

navigation = st.navigation(PAGES)
with st.sidebar:
    st.caption(f"Warehouse: `{app_config().db_path}`")
navigation.run()
