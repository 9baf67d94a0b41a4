"""Page chrome: one header style for every page, and the settings the server was started with."""
from __future__ import annotations

import streamlit as st

from app.access import AppConfig, load_config


def app_config() -> AppConfig:
    """The dashboard's settings (read from the environment on every run: cheap, and tests can change it)."""
    return load_config()


def page_header(title: str, subtitle: str) -> None:
    """Title and one-line purpose of a page."""
    st.title(title)
    st.caption(subtitle)
