"""The one run picker of the pages that compare runs side by side (Evidence funnel, Breakdowns)."""
from __future__ import annotations

from typing import Any

import polars as pl
import streamlit as st

from ._url_state import ignored_url_value, set_url, url_list


def run_picker(runs: pl.DataFrame, *, key: str, default_count: int, container: Any = None) -> list[str]:
    """A multiselect of `runs.run_id`, seeded from the URL's repeated `run` (an unknown id is named in a warning,
    never silently dropped) else the first `default_count` runs, and written back to the URL; [] with a hint
    when nothing is chosen."""
    run_ids = runs["run_id"].to_list() if runs.height else []
    asked = url_list("run")
    unknown = [r for r in asked if r not in run_ids]
    if unknown:
        ignored_url_value("run", ", ".join(unknown), "no such run in this warehouse")
    default = [r for r in asked if r in run_ids] or run_ids[:default_count]
    chosen = (container or st).multiselect("Runs", run_ids, default=default, key=key)
    set_url("run", chosen)
    if not chosen:
        st.info("Choose at least one run.")
    return chosen


__all__ = ["run_picker"]
