"""The one run picker of the pages that compare runs side by side (Evidence funnel, Breakdowns)."""
from __future__ import annotations

from typing import Any

import polars as pl
import streamlit as st

from trajscope.app.charts import readable_run_names

from ._url_state import ignored_url_value, set_url, url_list

# Runs whose name and id the picker's help lists (the Runs page lists every one).
_HELP_RUNS = 50


def run_ids_help(names: dict[str, str]) -> str:
    """The help of a run picker: each run's id beside its readable name, one click away."""
    shown = [f"- {name}: `{run_id}`" for run_id, name in list(names.items())[:_HELP_RUNS]]
    more = len(names) - _HELP_RUNS
    return "\n".join(["Runs are named dataset · controller/condition · model; their ids:", *shown,
                      *([f"- and {more} more (the Runs page lists every run)"] if more > 0 else [])])


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
    names = readable_run_names(runs, run_ids) if run_ids else {}
    chosen = (container or st).multiselect("Runs", run_ids, default=default, key=key, format_func=names.__getitem__,
                                           help=run_ids_help(names))
    set_url("run", chosen)
    if not chosen:
        st.info("Choose at least one run.")
    return chosen


__all__ = ["run_picker"]
