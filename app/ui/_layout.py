"""Page chrome: one header style for every page, and the settings the server was started with."""
from __future__ import annotations

import streamlit as st

from trajscope.app.access import AppConfig, load_config, served_lake


def app_config() -> AppConfig:
    """The dashboard's settings (read from the environment on every run: cheap, and tests can change it)."""
    if served_lake() is None:
        return load_config()
    # A writer committed since the last run: its snapshot is read once, the lake looked at once per run.
    return load_config(building=lambda: st.spinner(
        "Reading the lake's new commits (its derived tables are computed once per snapshot)…"))


def page_header(title: str, subtitle: str) -> None:
    """Title and one-line purpose of a page."""
    st.title(title)
    st.caption(subtitle)
