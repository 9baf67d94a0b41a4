"""Overview: what this warehouse holds and where to look first, each finding linked to the page that shows it."""
from __future__ import annotations

import streamlit as st

from trajscope.app.charts import readable_run_names
from trajscope.app.progress import arrived_sql, build_running, read_progress
from trajscope.app.queries import (
    overview_contents_sql,
    overview_gate_rejections_sql,
    overview_pairs_sql,
    overview_plane_moves_sql,
    run_choices_sql,
)
from trajscope.app.ui import app_config, fetch_many, page_header, require_warehouse

page_header("Overview", "What this warehouse holds, and three findings to open first: the gate at work "
            "in a replay, a movement on the failure plane, and a paired test of two conditions.")


def _percent(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.0f} %"


def _names(values: list[str] | None) -> str:
    return ", ".join(f"`{v}`" for v in values or []) or "none"


# -- The build's progress (trajscope demo writes DB.build.json): shown while it runs, refreshed in place ------
_FINDINGS = {  # finding -> (query key, what it waits for)
    "1 · The gate at work": ("gates", "a gate run (read_gate/full) with a rejected final"),
    "2 · A movement on the failure plane": ("moves", "a judged baseline and a judged intervention run"),
    "3 · A paired test": ("pairs", "a baseline and another run on the same questions"),
    "The intervention audit": ("audit", "the audit, after the runs"),
}


def _findings_ready() -> dict[str, bool]:
    results = fetch_many({"contents": overview_contents_sql(), "gates": overview_gate_rejections_sql(),
                          "pairs": overview_pairs_sql(), "moves": overview_plane_moves_sql()}) or {}
    ready = {key: key in results and results[key].df.height > 0 for key in ("gates", "pairs", "moves")}
    ready["audit"] = "contents" in results and bool(results["contents"].df["n_audit_records"][0])
    return ready


def _build_progress() -> None:
    progress = read_progress(app_config().db_path)
    if progress is None:
        return
    running = build_running(progress)
    if not running and progress.stage == "done":
        st.caption(f"Demo build finished ({progress.message}).")
        return
    st.subheader("Demo build" + (" — in progress" if running else f" — {progress.stage}"))
    st.markdown(f"Stage **{progress.stage}**: {progress.message or '…'} (started {progress.started_at})")
    arrived = {}
    if progress.runs:
        result = fetch_many({"arrived": arrived_sql([r.run_id for r in progress.runs])})
        if result is not None:
            arrived = {row["run_id"]: row for row in result["arrived"].df.iter_rows(named=True)}
    for run in progress.runs:
        row = arrived.get(run.run_id, {"arrived": 0, "judged": 0})
        status = "judged" if run.judged else ("running" if row["arrived"] else "waiting")
        st.progress(min(1.0, row["arrived"] / max(1, run.planned)),
                    text=f"{run.controller}/{run.condition}: {row['arrived']} of {run.planned} trajectories "
                         f"({status})")
    if progress.runs:
        ready = _findings_ready()
        icon = {True: ":material/check_circle:", False: ":material/hourglass_top:"}
        st.markdown("\n".join(f"- {icon[ready[key]]} **{name}**: "
                               + ("ready below" if ready[key] else f"waiting for {waits}")
                               for name, (key, waits) in _FINDINGS.items()))
    # A full rerun of the page when something new arrived, so the findings below fill in as well.
    seen = sum(r["arrived"] for r in arrived.values()), progress.stage, sum(r.judged for r in progress.runs)
    if st.session_state.get("build_seen", seen) != seen:
        st.session_state["build_seen"] = seen
        st.rerun()
    st.session_state["build_seen"] = seen


_live = st.fragment(run_every=3)(_build_progress)
_building = build_running(read_progress(app_config().db_path))
if _building:
    _live()
else:
    _build_progress()

if _building and not st.session_state.get("build_seen", (0,))[0]:
    # Nothing below yet, and not the "fill this warehouse" help either: the build is filling it.
    st.caption("The findings appear below as soon as the first trajectories arrive.")
    state = None
else:
    state = require_warehouse()
if state:
    results = fetch_many({
        "contents": overview_contents_sql(), "gates": overview_gate_rejections_sql(),
        "pairs": overview_pairs_sql(), "runs": run_choices_sql(),
        **({"moves": overview_plane_moves_sql()} if "failure_plane" in state.views else {}),
    })
    if results is not None:
        contents = results["contents"].df.row(0, named=True)
        # Findings name runs as the pickers do (dataset · controller/condition · model); each links to its id.
        run_names = readable_run_names(results["runs"].df, results["runs"].df["run_id"].to_list())
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
                    label=(f"The gates of {run_names.get(row['run_id'], row['run_id'])} rejected "
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
                    label=(f"{run_names.get(row['from_run'], row['from_run'])} → "
                           f"{run_names.get(row['to_run'], row['to_run'])}: P_disc "
                           f"{_percent(row['p_disc_from'])} → {_percent(row['p_disc_to'])}, P_post "
                           f"{_percent(row['p_post_from'])} → {_percent(row['p_post_to'])}: "
                           "this movement on the plane"),
                )
            st.caption("Positions use Read-Gate's four classes (RG §3): a wrong answer the gate forced at the turn "
                       "cap or context budget is classified like any other (how it ended is a flag), so forcing "
                       "answers does not move a run off the discipline axis. A short arrow, or none, is the "
                       "finding: the gate rejected finals but did not get better evidence read.")
        else:
            st.caption("No baseline with an intervention of the same dataset and model to draw an arrow between.")

        st.subheader("3 · A paired test")
        pairs = results["pairs"].df
        if pairs.height:
            for row in pairs.head(4).iter_rows(named=True):
                st.page_link(
                    "page_scripts/compare.py", icon=":material/compare_arrows:",
                    query_params={"a": row["run_a"], "b": row["run_b"]},
                    label=(f"McNemar for {run_names.get(row['run_a'], row['run_a'])} vs "
                           f"{run_names.get(row['run_b'], row['run_b'])} on {row['paired']} "
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
