"""Trajectory replay: one trajectory step by step, or the same question under two conditions."""
from __future__ import annotations

import streamlit as st

from trajscope.app.access import RELATIONS_SQL
from trajscope.app.charts import readable_run_names
from trajscope.app.queries import question_choices_sql, replay_peers_sql, run_choices_sql
from trajscope.app.replay import load_trajectory, pick_verdict, render_fork_command, render_forks, render_trajectory
from trajscope.app.ui import fetch, page_header, require_warehouse, run_ids_help, set_url, url_value


def human_labels_present() -> bool:
    """Whether the warehouse has the human_step_labels table (an older warehouse lacks it)."""
    found = fetch(f"SELECT count(*) AS n FROM ({RELATIONS_SQL}) WHERE name = 'human_step_labels'")
    return found is not None and found.df["n"][0] > 0

page_header("Trajectory replay", "Each action with its arguments, the candidates it saw (gold "
            "highlighted), passages read, gate rejections, injections, the register, the answer and "
            "its verdicts.")

state = require_warehouse()
if state:
    with_labels = {"failure_rg", "failure_erag"} <= state.views
    with_funnel = {"evidence_funnel", "first_decisive_error"} <= state.views
    with_human = with_funnel and human_labels_present()
    trajectory_id = url_value("trajectory")
    with st.expander("Pick a trajectory", expanded=trajectory_id is None):
        runs = fetch(run_choices_sql())
        if runs is not None and runs.df.height:
            run_ids = runs.df["run_id"].to_list()
            current_run = trajectory_id.split("::")[0] if trajectory_id and "::" in trajectory_id else None
            run_index = run_ids.index(current_run) if current_run in run_ids else 0
            run_names = readable_run_names(runs.df, run_ids)
            run_id = st.selectbox("Run", run_ids, index=run_index, key="replay-run", format_func=run_names.__getitem__,
                                  help=run_ids_help(run_names))
            choices = fetch(question_choices_sql(run_id))
            if choices is not None and choices.df.height:
                ids = choices.df["trajectory_id"].to_list()
                labels = dict(zip(ids, choices.df["question_id"].to_list(), strict=False))
                index = ids.index(trajectory_id) if trajectory_id in ids else None
                picked = st.selectbox("Question", ids, index=index, key="replay-question",
                                      format_func=lambda t: labels[t], placeholder="Choose a question")
                if picked and picked != trajectory_id:
                    set_url("trajectory", picked)
                    set_url("vs", None)
                    set_url("verdict", None)  # a verdict is on one trajectory
                    st.rerun()

    if trajectory_id is None:
        st.info("Pick a trajectory above, or open one from the Runs, Failure plane or Compare page. "
                "The URL (`?trajectory=...`) reopens the same replay.", icon=":material/arrow_upward:")
    else:
        peers = fetch(replay_peers_sql(trajectory_id))
        other = url_value("vs")
        if peers is not None and peers.df.height:
            peer_ids = peers.df["trajectory_id"].to_list()
            names = {row["trajectory_id"]: f"{row['condition'] or '—'} · {row['run_id']}"
                     for row in peers.df.iter_rows(named=True)}
            other = st.selectbox(
                "Side by side with the same question under another condition", [None, *peer_ids],
                index=(peer_ids.index(other) + 1) if other in peer_ids else 0, key="replay-vs",
                format_func=lambda t: "— none —" if t is None else names[t],
            )
            set_url("vs", other)
        else:
            other = None
        # Scan verdicts live in migration 0010's tables; an older warehouse has no rubric_verdicts view.
        cited = pick_verdict(trajectory_id, url_value("verdict")) if "rubric_verdicts" in state.views else {}
        main = load_trajectory(trajectory_id, with_labels=with_labels, with_funnel=with_funnel,
                               with_human=with_human)
        if main is not None:
            if other:
                second = load_trajectory(other, with_labels=with_labels, with_funnel=with_funnel, with_human=with_human)
                left, right = st.columns(2, gap="large")
                with left:
                    found = render_trajectory(main, compact=True, cited=cited)
                if second is not None:
                    with right:
                        render_trajectory(second, compact=True)
            else:
                found = render_trajectory(main, cited=cited)
            if not found:
                st.warning(f"No trajectory `{trajectory_id}` in this warehouse. Pick one above.",
                           icon=":material/search:")
            else:
                header = main["header"].df
                render_fork_command(trajectory_id, main["steps"].df,
                                    header["controller"][0] if header.height else None)
                if "fork_pairs" in state.views:
                    render_forks(trajectory_id, with_labels=with_labels)
