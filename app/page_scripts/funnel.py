"""Evidence funnel: where along query → retrieve → show → read → use each run lost its gold passages, per hop."""
from __future__ import annotations

from dataclasses import replace

import duckdb
import polars as pl
import streamlit as st

from trajscope.analysis.queries import FUNNEL_STAGES, QueryError, compare_funnels
from trajscope.app.access import read_connection
from trajscope.app.charts import funnel_chart, readable_run_names, stacked_share_chart, stage_change_chart
from trajscope.app.queries import (
    decisive_error_summary_sql,
    failure_breakdown_sql,
    funnel_summary_sql,
    run_choices_sql,
)
from trajscope.app.ui import (
    app_config,
    fetch,
    figure_panel,
    not_available,
    page_header,
    require_warehouse,
    run_picker,
    show_error,
    sql_expander,
    table_exports,
    table_panel,
    warehouse_stamp,
)
from trajscope.warehouse import WarehouseBusy

page_header("Evidence funnel", "For every gold passage: was it asked for, retrieved, shown in the top-k, read, "
            "used? Per run and per hop; two runs paired stage by stage (McNemar); and each wrong answer's "
            "first decisive error beside the ExecutionRAG taxonomy.")

NEEDED = {"evidence_funnel_summary", "evidence_funnel_question", "first_decisive_error_summary", "failure_breakdown"}
PERCENT = {s: st.column_config.NumberColumn(format="percent") for s in (*FUNNEL_STAGES, "share", "share_a",
                                                                        "share_b", "delta")}


@st.cache_data(max_entries=64, show_spinner="Pairing the funnels…")
def _paired(db_path: str, stamp: tuple[int, ...], run_a: str, run_b: str):
    # Cached per warehouse stamp, as the Compare page does.
    with read_connection(db_path, lock_wait_s=app_config().lock_wait_s) as con:
        return compare_funnels(con, run_a, run_b)


state = require_warehouse()
if state and not NEEDED <= state.views:
    not_available("Evidence funnel", "the views " + ", ".join(f"`{v}`" for v in sorted(NEEDED - state.views)))
elif state:
    runs = fetch(run_choices_sql())
    if runs is not None and runs.df.height:
        chosen = run_picker(runs.df, key="funnel-runs", default_count=2)
        if chosen:
            labels = readable_run_names(runs.df, chosen)
            named = lambda df: df.with_columns(run=pl.col("run_id").replace_strict(labels))  # noqa: E731
            # One query for the three groupings; the page only picks its rows (evidence_funnel_summary.grouped_by).
            summary = fetch(funnel_summary_sql(chosen))
            part = lambda result, g: replace(  # noqa: E731
                result, df=result.df.filter(pl.col("grouped_by") == g).drop("grouped_by"))
            if summary is not None and summary.df.height == 0:
                st.info("These runs have no question with gold passages: the funnel does not apply.")
            elif summary is not None:
                whole, by_hop, types = part(summary, "run"), part(summary, "hop"), part(summary, "question_type")
                left, right = st.columns(2, gap="large")
                with left:
                    figure_panel(funnel_chart(named(whole.df), stages=FUNNEL_STAGES, group="run",
                                              title="Funnel per run"), whole, key="funnel-run", stem="funnel-by-run")
                with right:
                    figure_panel(funnel_chart(named(by_hop.df), stages=FUNNEL_STAGES, group="run", facet="hop",
                                              title="Funnel per hop"), by_hop, key="funnel-hop", stem="funnel-by-hop")
                table_panel(by_hop, key="funnel-hop-table", stem="funnel-by-hop", column_config=PERCENT)
                with st.expander("By question type"):
                    table_panel(types, key="funnel-type-table", stem="funnel-by-type", column_config=PERCENT)

            st.divider()
            st.subheader("Two runs, paired stage by stage")
            if len(chosen) < 2:
                st.caption("Choose two runs to pair them.")
            else:
                c1, c2 = st.columns(2)
                run_a = c1.selectbox("Run A (reference)", chosen, index=0, key="funnel-a",
                                     format_func=labels.__getitem__)
                run_b = c2.selectbox("Run B", chosen, index=1, key="funnel-b", format_func=labels.__getitem__)
                try:
                    paired = _paired(str(app_config().db_path), warehouse_stamp(app_config().db_path), run_a, run_b)
                except (QueryError, WarehouseBusy, duckdb.Error) as exc:
                    show_error(str(exc).splitlines()[0])
                else:
                    if paired.frame.height == 0:
                        st.info("No shared question with gold passages: nothing to pair.")
                    else:
                        st.caption("Share of the questions both runs answered whose gold passages reached each stage "
                                   "(all hops: every passage; hop k: that hop's); red bars: McNemar exact p < 0.05.")
                        figure_panel(stage_change_chart(paired.frame, stages=FUNNEL_STAGES,
                                                        title=f"{labels[run_b]} − {labels[run_a]}"),
                                     [], key="funnel-paired", stem="funnel-paired")
                        st.dataframe(paired.frame, hide_index=True, column_config=PERCENT)
                        sql_expander(paired.sql)
                        table_exports(paired.frame, key="funnel-paired-table", stem="funnel-paired")

            st.divider()
            st.subheader("First decisive error, beside the ExecutionRAG taxonomy")
            left, right = st.columns(2, gap="large")
            summary = fetch(decisive_error_summary_sql(chosen))
            rules = None if summary is None else part(summary, "rule")
            decisive = None if summary is None else part(summary, "rule_and_label")
            with left:
                if rules is not None and rules.df.height:
                    figure_panel(stacked_share_chart(named(rules.df), slice_title="", run_field="run",
                                                     title="First decisive error (trajscope rules)"),
                                 rules, key="decisive", stem="first-decisive-error")
                elif rules is not None:
                    st.caption("No wrong trajectory in these runs.")
            with right:
                erag = fetch(failure_breakdown_sql(chosen, "execution_rag", "hop_count"))
                if erag is not None and erag.df.height:
                    figure_panel(stacked_share_chart(named(erag.df), slice_title="Hop count", run_field="run",
                                                     title="ExecutionRAG labels"),
                                 erag, key="decisive-erag", stem="erag-by-hop")
            if decisive is not None and decisive.df.height:
                table_panel(decisive, key="decisive-table", stem="first-decisive-error",
                            column_config=PERCENT)
