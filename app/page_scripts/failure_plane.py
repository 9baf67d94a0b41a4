"""Failure plane: P_disc against P_post per run, arrows from each baseline to its interventions."""
from __future__ import annotations

from collections.abc import Set as AbstractSet

import polars as pl
import streamlit as st

from trajscope.analysis.queries import (
    CI_METHODS,
    LABELLED_RUNS_SQL,
    extractor_agreement,
    human_agreement,
    judge_agreements,
    pooled_cooccurrence,
    published_agreement,
)
from trajscope.app.access import read_connection
from trajscope.app.charts import failure_plane_chart, readable_run_names
from trajscope.app.queries import failure_plane_sql, plane_arrows_sql, plane_failures_sql
from trajscope.app.ui import (
    app_config,
    fetch,
    figure_panel,
    not_available,
    page_header,
    require_warehouse,
    set_url,
    sql_expander,
    table_exports,
    table_panel,
    url_choice,
    url_list,
    url_value,
    warehouse_stamp,
)
from trajscope.format import ENTITY_EXTRACTORS, GATE_EXTRACTOR

page_header("Failure plane", "Discipline failures (P_disc: finalised before reading evidence) against "
            "post-gold-read failures (P_post) as shares of each run's judged trajectories; every wrong "
            "answer, one forced at the turn cap or budget included, is in one of the paper's four classes. "
            "Click a point, or "
            "pick a run below, to list its failures.")



@st.cache_data(max_entries=32, show_spinner="Measuring agreement…")
def _agreement(db_path: str, stamp: tuple[int, ...], run_ids: tuple[str, ...]):
    # Cached per warehouse stamp, like the Compare page's statistics.
    with read_connection(db_path, lock_wait_s=app_config().lock_wait_s) as con:
        runs = list(run_ids)
        return extractor_agreement(con, runs), judge_agreements(con, runs), pooled_cooccurrence(con, runs)


def _agreement_section(run_ids: list[str]) -> None:
    """Read-Gate §5.1 and App. L: extractor and judge kappa, and the co-occurrence table, over the runs shown."""
    config = app_config()
    extractors, judges, pooled = _agreement(str(config.db_path), warehouse_stamp(config.db_path), tuple(run_ids))
    st.subheader("Agreement over the runs shown")
    rows = [extractors, *judges]
    columns = st.columns(max(1, len(rows)))
    for column, item in zip(columns, rows, strict=False):
        value = "—" if item.agreement is None else f"{item.agreement.kappa:.3f}"
        column.metric(f"κ {item.what}", value,
                      help=None if item.agreement is None else f"n = {item.agreement.n:,}, observed agreement "
                                                               f"{item.agreement.observed_agreement:.1%}")
    st.markdown("**Discipline / post-gold-read co-occurrence, pooled** (wrong trajectories)")
    st.dataframe(pooled.frame, hide_index=True)
    if pooled.excluded_runs:
        st.caption("Left out (no discipline test applies): " + ", ".join(f"`{r}`" for r in pooled.excluded_runs))
    sql_expander(pooled.sql)


@st.cache_data(max_entries=32, show_spinner="Scoring attributions against people…")
def _human(db_path: str, stamp: tuple[int, ...], run_id: str):
    with read_connection(db_path, lock_wait_s=app_config().lock_wait_s) as con:
        return human_agreement(con, run_id)


def _human_section(views: AbstractSet[str]) -> None:
    """Where the first error is: each attribution method against the people's labels (agreement --human)."""
    if "attribution_agreement" not in views:
        return
    labelled = fetch(LABELLED_RUNS_SQL)
    if labelled is None or not labelled.df.height:
        return
    st.divider()
    st.subheader("Agreement with people: the first error")
    run_ids = labelled.df["run_id"].to_list()
    run_id = st.selectbox("Run with human labels", run_ids, key="plane-human-run")
    config = app_config()
    result = _human(str(config.db_path), warehouse_stamp(config.db_path), run_id)
    if not result.methods:
        return
    st.caption(f"{result.methods[0].n_labelled} labelled trajectories; each method's step, ±1 / ±3 step and agent "
               "accuracy and category kappa, beside the trivial baselines, with 95% CIs ("
               + "; ".join(f"{k}: {v}" for k, v in CI_METHODS.items()) + "). \"does not apply\" says why a "
               "method or the labels cannot give a measure.")
    st.dataframe(result.frame(), hide_index=True)
    sql_expander(result.sql)
    published = _published(str(config.db_path), warehouse_stamp(config.db_path), run_id)
    if published.metrics.rows:
        st.markdown(f"**The benchmarks' own metrics** ({published.metrics.family}): step accuracy, exact label map "
                    "and first-error accuracy as the benchmark's script computes them, each imported method "
                    "(`trajscope ingest --labels FILE --method NAME`) beside the rules and the trivial baselines; "
                    "mcnemar pairs each with the rules on first-error hits. An empty cell: "
                    + "; ".join(published.metrics.reasons()))
        st.dataframe(published.metrics.frame(), hide_index=True)
    if published.answers.judges:
        st.caption("The answer verdict against people's final labels, per judge (accuracy: Wilson 95% CI; kappa: "
                   "percentile bootstrap)")
        st.dataframe(published.answers_frame(), hide_index=True)


@st.cache_data(max_entries=32, show_spinner="Scoring methods by the benchmarks' own metrics…")
def _published(db_path: str, stamp: tuple[int, ...], run_id: str):
    with read_connection(db_path, lock_wait_s=app_config().lock_wait_s) as con:
        return published_agreement(con, run_id, versus="rules")


def _off_plane(points: pl.DataFrame, names: dict[str, str]) -> None:
    """The runs not drawn because an axis does not apply to them, each by its name with the view's reason."""
    missing = points.filter(pl.col("p_disc").is_null() | pl.col("p_post").is_null())
    if not missing.height:
        return
    st.markdown(f"**Not drawn ({missing.height} run(s))**: an axis does not apply to them, so they are not "
                "plotted as zeros; the other axis, where it applies, is in the table below.")
    for row in missing.iter_rows(named=True):
        reasons = [r for r in (row["p_disc_reason"], row["p_post_reason"]) if r]
        st.caption(f"{names.get(row['run_id'], row['run_id'])} — {'; '.join(reasons) or 'no reason stored'}",
                   help=f"Run id: `{row['run_id']}`")


state = require_warehouse()
if state and "failure_plane" not in state.views:
    not_available("The failure plane", "the `failure_plane` view (warehouse migration with the "
                  "failure taxonomies; re-ingest to install it)")
elif state:
    c1, c2 = st.columns([1, 3])
    extractors = list(ENTITY_EXTRACTORS)
    extractor = c1.radio("Entity extractor", extractors, horizontal=True, key="plane-extractor",
                         index=extractors.index(url_choice("extractor", extractors, GATE_EXTRACTOR)))
    set_url("extractor", extractor if extractor != GATE_EXTRACTOR else None)
    points = fetch(failure_plane_sql(extractor, []))
    if points is not None and points.df.height:
        all_datasets = sorted(d for d in points.df["dataset"].unique().to_list() if d is not None)
        datasets = c2.multiselect("Datasets", all_datasets, key="plane-datasets", placeholder="All",
                                  default=[d for d in url_list("dataset") if d in all_datasets])
        set_url("dataset", datasets)
        shown = datasets or all_datasets
        arrows = fetch(plane_arrows_sql(extractor, shown))
        # A run missing an axis is not a point at zero: it is left off the plane and listed with the view's reason.
        plotted = points.df.filter(pl.col("p_disc").is_not_null() & pl.col("p_post").is_not_null())
        picked = None
        if arrows is not None:
            grid = st.columns(2)
            for index, dataset in enumerate(shown):
                with grid[index % 2]:
                    chart = failure_plane_chart(
                        plotted.filter(pl.col("dataset") == dataset),
                        arrows.df.filter(pl.col("dataset") == dataset), title=dataset)
                    event = figure_panel(chart, [points, arrows], key=f"plane-{dataset}",
                                         stem=f"failure-plane-{dataset}-{extractor}", selectable=True)
                    chosen = (event.selection.get("run") or []) if event is not None else []
                    if chosen:
                        picked = chosen[0].get("run_id")
        # Without a dataset filter every run is listed, a log without a dataset name (dataset NULL) included.
        _off_plane(points.df.filter(pl.col("dataset").is_in(datasets)) if datasets else points.df,
                   readable_run_names(points.df.unique("run_id"), points.df["run_id"].unique().to_list()))
        with st.expander("The plane as a table"):
            st.dataframe(points.df, hide_index=True,
                         column_config={"p_disc": st.column_config.NumberColumn(format="percent"),
                                        "p_post": st.column_config.NumberColumn(format="percent")})
            table_exports(points.df, key="plane-table", stem=f"failure-plane-{extractor}")
        _agreement_section(sorted(set(points.df.filter(pl.col("dataset").is_in(shown))["run_id"].to_list())))
        st.divider()
        run_ids = points.df["run_id"].to_list()
        names = readable_run_names(points.df.unique("run_id"), run_ids)
        current = picked or url_value("run")
        run_id = st.selectbox("Failures of run", run_ids, key="plane-run", format_func=names.__getitem__,
                              index=run_ids.index(current) if current in run_ids else None,
                              placeholder="Choose a run (or click its point)")
        if picked and picked != run_id:
            run_id = picked
        set_url("run", run_id)
        if run_id:
            failures = fetch(plane_failures_sql(run_id, extractor))
            if failures is not None:
                st.markdown(f"**{failures.df.height} wrong trajectories of `{run_id}`**, labelled by "
                            f"the Read-Gate taxonomy ({extractor} extractor)")
                table_panel(failures, key="plane-failures", stem=f"failures-{run_id}",
                            column_config={"replay": st.column_config.LinkColumn(
                                "Replay", display_text="open ↗")})
    elif points is not None:
        st.info("No runs in the failure plane yet.")
if state:
    _human_section(state.views)
