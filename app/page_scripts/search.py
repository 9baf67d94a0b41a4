"""Search: write a rubric and run `trajscope scan` (its own process) or copy it; browse, label and compare verdicts."""
from __future__ import annotations

import shlex
from pathlib import Path

import altair as alt
import streamlit as st

from trajscope.analysis.queries import (
    QueryError,
    RubricAgreement,
    compare_runs,
    comparison_frame,
    rubric_agreement,
)
from trajscope.analysis.stats import UnpairedComparison
from trajscope.app.access import read_connection
from trajscope.app.charts import readable_run_names
from trajscope.app.jobs import ScanJob, launch_scan, read_scan_job, remove_scan_files, scan_command, scan_running
from trajscope.app.queries import (
    cluster_sizes_sql,
    rubric_choices_sql,
    run_choices_sql,
    verdict_steps_sql,
    verdicts_sql,
)
from trajscope.app.ui import (
    app_config,
    fetch,
    page_header,
    require_warehouse,
    run_ids_help,
    show_error,
    table_panel,
)
from trajscope.warehouse import WarehouseBusy
from trajscope.warehouse.verdicts import LABELS, label_verdict, slice_sql

page_header("Search", "Rubric search over trajectories with a language model: write a rubric, choose runs and a "
            "slice, and run the scan (in its own process: the page shows its progress and never waits on the "
            "model), or copy the `trajscope scan` command. Then browse the stored verdicts, hits and near-misses "
            "with their explanations and cited steps, open a replay with those steps marked, give your "
            "agree / disagree / unsure labels, see clusters and a rubric's prevalence between two runs.")

config = app_config()


def _ended_scan(path: Path) -> tuple[ScanJob | None, str, bool]:
    """The scan's progress, its log's tail and whether it ended; an ended scan's are kept in the session
    as its files are removed."""
    kept = st.session_state.get("search-job-ended")
    if kept is not None and kept[0] == str(path):
        return kept[1], kept[2], True
    job = read_scan_job(path)
    if job is None or scan_running(job):
        return job, "", False
    log = path.with_suffix(".log")
    tail = log.read_text(errors="replace")[-1500:] if log.exists() else ""
    st.session_state["search-job-ended"] = (str(path), job, tail)
    remove_scan_files(path)  # the scan ended: nothing of it is left beside the warehouse
    return job, tail, True


def _scan_progress() -> None:
    """The page's scan: a progress bar while it runs; once done, one rerun so its verdicts appear below."""
    path = Path(st.session_state["search-job"])
    job, tail, ended = _ended_scan(path)
    if job is None:
        st.warning(f"The scan's progress file {path} is gone.")
        return
    if job.stage == "done":
        st.success(f"Scan finished: {job.message}", icon=":material/check_circle:")
        if st.session_state.get("search-job-shown") != job.job_id:
            st.session_state["search-job-shown"] = job.job_id
            st.rerun()  # the whole page: the verdicts list reads the new verdicts
    elif job.stage == "failed" or ended:
        st.error(f"Scan {job.stage if job.stage == 'failed' else 'stopped (its process is gone)'}: "
                 f"{job.message or 'no message'}", icon=":material/error:")
        if tail:
            st.code(tail, language="text")
    else:
        share = job.done / job.total if job.total else 0.0
        st.progress(share, text=f"Scan {job.job_id}, stage {job.stage}: {job.done} of {job.total or '?'} "
                                f"trajectories (you may use other pages meanwhile)")


_live_progress = st.fragment(run_every=2)(_scan_progress)

state = require_warehouse()
if state:
    runs = fetch(run_choices_sql())
    run_ids = runs.df["run_id"].to_list() if runs is not None else []
    run_names = readable_run_names(runs.df, run_ids) if runs is not None else {}

    st.subheader("Scan")
    rubric = st.text_area("Rubric", key="search-rubric",
                          placeholder="The agent read a gold passage and still answered wrong.")
    c1, c2, c3 = st.columns([2, 3, 1])
    chosen = c1.multiselect("Runs", run_ids, default=run_ids[:1], key="search-runs", format_func=run_names.__getitem__,
                            help=run_ids_help(run_names))
    where = c2.text_input("Slice (SQL condition over trajectory_forensics)", key="search-where",
                          placeholder="any_gold_read AND NOT correct")
    model = c3.text_input("Model", value="local", key="search-model",
                          help="local (the embedded model), a model name on an OpenAI-compatible endpoint, or mock:URL")
    if rubric.strip() and chosen:
        st.caption("Run it here, or in a terminal (progress bar, cost and the verdict counts are printed there):")
        st.code(shlex.join(scan_command(config.db_path, rubric, chosen, where, model)), language="bash")
        with st.expander("The slice's SQL (run through the sandboxed read path)"):
            st.code(slice_sql(chosen, where), language="sql")
        busy = "search-job" in st.session_state and scan_running(read_scan_job(Path(st.session_state["search-job"])))
        if st.button("Run the scan", key="search-run", type="primary", disabled=busy,
                     help="Starts `trajscope scan` in its own process; its progress shows below."):
            st.session_state["search-job"] = str(launch_scan(config.db_path, rubric, chosen, where, model))
    else:
        st.caption("Write a rubric and choose runs to get the command.")
    if "search-job" in st.session_state:
        job = read_scan_job(Path(st.session_state["search-job"]))
        (_live_progress if scan_running(job) else _scan_progress)()

    st.subheader("Verdicts")
    rubrics = fetch(rubric_choices_sql())
    if rubrics is None or not rubrics.df.height:
        st.info("No rubric verdicts yet: run the scan command above.")
    else:
        options = rubrics.df["rubric_hash"].to_list()
        texts = dict(zip(options, rubrics.df["rubric_text"].to_list(), strict=True))
        picked = st.selectbox("Rubric", options, key="search-rubric-hash",
                              format_func=lambda h: f"{h}: {texts[h][:90]}")
        shown = st.multiselect("Verdicts shown", ["match", "unsure", "no_match", "error"], default=["match", "unsure"],
                               key="search-verdicts", help="Hits (match) and near-misses (unsure) first.")
        verdicts = fetch(verdicts_sql(picked, chosen, shown))
        if verdicts is not None:
            table_panel(verdicts, key="search-verdicts", stem=f"verdicts-{picked}",
                        column_config={"replay": st.column_config.LinkColumn("replay", display_text="open")})
            df = verdicts.df
            if df.height:
                ids = df["verdict_id"].to_list()
                names = dict(zip(ids, (f"{r} / {q} ({v})" for r, q, v in
                                       zip(df["run_id"], df["question_id"], df["verdict"], strict=True)), strict=True))
                one = st.selectbox("Verdict", ids, format_func=names.__getitem__, key="search-one")
                row = df.filter(df["verdict_id"] == one).row(0, named=True)
                st.markdown(f"**{row['verdict']}**: {row['explanation'] or row['error'] or ''}")
                st.markdown(f"[Open the replay with the cited steps marked]({row['replay']})")
                steps = fetch(verdict_steps_sql(one))
                if steps is not None:
                    for s in steps.df.iter_rows(named=True):
                        line = f"[{s['label']}] {s['kind']}" + (f" by {s['agent']}" if s["agent"] else "")
                        text = f"{line}: {s['text']}"
                        st.markdown(f":orange-background[**cited** {text}]" if s["cited"] else text)
                with st.form("search-label"):
                    label = st.radio("Your label of this verdict", LABELS, horizontal=True, key="search-label-value")
                    note = st.text_input("Note (optional)", key="search-label-note")
                    if st.form_submit_button("Save label"):
                        try:
                            label_verdict(config.db_path, one, label, note or None)
                            st.success(f"Labelled {label}.")
                        except (LookupError, ValueError, WarehouseBusy) as exc:
                            show_error(str(exc))

        agreement: RubricAgreement | None
        try:
            with read_connection(config.db_path, lock_wait_s=config.lock_wait_s) as con:
                agreement = rubric_agreement(con, None, picked)
        except (QueryError, WarehouseBusy) as exc:
            agreement = None
            st.info(str(exc))
        if agreement is not None and agreement.rows:
            st.subheader("Agreement with people's labels")
            st.caption("Each model's verdicts on this rubric against your labels (agree keeps the verdict, disagree "
                       "flips it; unsure left out), beside always saying match; 95% Wilson intervals, kappa by "
                       "bootstrap. Same table as `trajscope agreement --human RUN`.")
            st.dataframe(agreement.frame(), hide_index=True, key="search-agreement")
        elif agreement is not None:
            st.caption("No labelled verdict of this rubric yet: label some above to see its precision and recall.")

        if len(run_ids) >= 2:
            st.subheader("Prevalence between two runs")
            p1, p2 = st.columns(2)
            run_a = p1.selectbox("Run A", run_ids, key="search-a", format_func=run_names.__getitem__)
            run_b = p2.selectbox("Run B", run_ids, index=1, key="search-b", format_func=run_names.__getitem__)
            try:
                with read_connection(config.db_path, lock_wait_s=config.lock_wait_s) as con:
                    comparison = compare_runs(con, run_a, run_b, metric=f"rubric:{picked}")
                st.caption(f"Matches the rubric, B vs A: {comparison.pairing}; unsure and error verdicts left out. "
                           "Same statistics as `trajscope compare A B --rubric HASH`.")
                st.dataframe(comparison_frame(comparison), hide_index=True, key="search-prevalence")
            except (QueryError, UnpairedComparison) as exc:
                st.info(str(exc))

    st.subheader("Clusters")
    clusters = fetch(cluster_sizes_sql())
    if clusters is None or not clusters.df.height:
        st.info("No clustering yet: `trajscope cluster --runs RUN --k 5` (embedding) or --method propose-assign.")
    else:
        first = clusters.df["clustering_id"][0]
        latest = clusters.df.filter(clusters.df["clustering_id"] == first)
        st.caption(f"Clustering {first} ({latest['method'][0]}, {latest['model'][0]})")
        chart = alt.Chart(latest.to_pandas()).mark_bar().encode(
            x=alt.X("trajectories:Q", title="trajectories"), y=alt.Y("name:N", sort="-x", title=None),
            tooltip=["name", "description", "trajectories"])
        st.altair_chart(chart, use_container_width=True)
        table_panel(clusters, key="search-clusters", stem="clusters")
