"""Overview: what this warehouse holds and where to look first, each finding linked to the page that shows it."""
from __future__ import annotations

import streamlit as st

from app.queries import (
    overview_contents_sql,
    overview_gate_rejections_sql,
    overview_pairs_sql,
    overview_plane_moves_sql,
)
from app.ui import fetch_many, page_header, require_warehouse

page_header("Overview", "What this warehouse holds, and three findings to open first: the gate at work "
            "in a replay, a movement on the failure plane, and a paired test of two conditions.")


def _percent(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.0f} %"


def _names(values: list[str] | None) -> str:
    return ", ".join(f"`{v}`" for v in values or []) or "none"


state = require_warehouse()
if state:
    results = fetch_many({
        "contents": overview_contents_sql(), "gates": overview_gate_rejections_sql(),
        "pairs": overview_pairs_sql(),
        **({"moves": overview_plane_moves_sql()} if "failure_plane" in state.views else {}),
    })
    if results is not None:
        contents = results["contents"].df.row(0, named=True)
        st.subheader("What is here")
        cols = st.columns(4)
        cols[0].metric("Runs", contents["n_runs"])
        cols[1].metric("Trajectories", contents["n_trajectories"])
        cols[2].metric("Questions", contents["n_questions"])
        cols[3].metric("Audit records", contents["n_audit_records"])
        st.markdown(f"Datasets {_names(contents['datasets'])}; models {_names(contents['models'])}; "
                    f"controller/condition {_names(contents['conditions'])}.")
        st.page_link("page_scripts/runs.py", label="Every run with its accuracy, reads and cost",
                     icon=":material/table_rows:")

        st.subheader("1 · The gate at work")
        gates = results["gates"].df
        if gates.height:
            for row in gates.iter_rows(named=True):
                st.page_link(
                    "page_scripts/replay.py", icon=":material/replay:",
                    query_params={"trajectory": row["first_trajectory"]},
                    label=(f"The gates of `{row['run_id']}` ({row['controller']}/{row['condition']}) rejected "
                           f"{row['rejections']} final(s) in {row['trajectories']} trajectories: open a replay"),
                )
        else:
            st.caption("No gate rejected a final in this warehouse (a `read_gate` run under the `read_gate`, "
                       "`lowev` or `full` condition records each rejection as a step).")

        st.subheader("2 · A movement on the failure plane")
        moves = results.get("moves")
        if moves is not None and moves.df.height:
            for row in moves.df.head(3).iter_rows(named=True):
                st.page_link(
                    "page_scripts/failure_plane.py", icon=":material/scatter_plot:",
                    query_params={"run": row["to_run"], "dataset": row["dataset"]},
                    label=(f"`{row['from_run']}` → `{row['to_run']}` ({row['condition']}): P_disc "
                           f"{_percent(row['p_disc_from'])} → {_percent(row['p_disc_to'])}, P_post "
                           f"{_percent(row['p_post_from'])} → {_percent(row['p_post_to'])}: "
                           "this movement on the plane"),
                )
        else:
            st.caption("No baseline with an intervention of the same dataset and model to draw an arrow between.")

        st.subheader("3 · A paired test")
        pairs = results["pairs"].df
        if pairs.height:
            for row in pairs.head(4).iter_rows(named=True):
                st.page_link(
                    "page_scripts/compare.py", icon=":material/compare_arrows:",
                    query_params={"a": row["run_a"], "b": row["run_b"]},
                    label=(f"McNemar for baseline vs {row['controller']}/{row['condition']} on {row['paired']} "
                           f"paired questions ({row['fixed']} fixed, {row['broken']} broken)"),
                )
        else:
            st.caption("No baseline run shares questions with another run of its dataset and model.")

        st.subheader("And then")
        if contents["n_audit_records"]:
            st.page_link("page_scripts/audit.py", icon=":material/science:",
                         label=f"The intervention audit: {contents['n_audit_records']} records, remove vs placebo")
        st.page_link("page_scripts/breakdowns.py", icon=":material/stacked_bar_chart:",
                     label="Why answers were wrong, by hop count and question type")
        st.page_link("page_scripts/sql_console.py", icon=":material/terminal:",
                     label="Every number here is a query: try it in the SQL console")
