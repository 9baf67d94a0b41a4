"""Page chrome: one header style for every page, and the settings the server was started with."""
from __future__ import annotations

import streamlit as st

from app.access import AppConfig, load_config, served_lake


def app_config() -> AppConfig:
    """The dashboard's settings (read from the environment on every run: cheap, and tests can change it)."""
    lake = served_lake()
    if lake is not None:
        from warehouse.lake import lake_catalog_built

        if not lake_catalog_built(lake):  # a writer committed since the last run: its snapshot is read once
            with st.spinner("Reading the lake's new commits (its derived tables are computed once per snapshot)…"):
                return load_config()
    return load_config()


def page_header(title: str, subtitle: str) -> None:
    """Title and one-line purpose of a page."""
    st.title(title)
    st.caption(subtitle)
