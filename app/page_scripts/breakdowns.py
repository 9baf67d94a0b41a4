"""Breakdowns: failure causes of both taxonomies by hop count and by question type; recall by hop."""
from __future__ import annotations

import polars as pl
import streamlit as st

from trajscope.app.charts import grouped_bar_chart, readable_run_names, stacked_share_chart
from trajscope.app.queries import (
    failure_breakdown_sql,
    hop_breakdown_sql,
    run_choices_sql,
    type_breakdown_sql,
)
from trajscope.app.ui import (
    fetch,
    figure_panel,
    not_available,
    page_header,
    require_warehouse,
    run_picker,
    set_url,
    table_exports,
    table_panel,
    url_choice,
)

page_header("Breakdowns", "Why answers were wrong, sliced by hop count and by question type, under "
            "either failure taxonomy; and how much gold evidence reached the agent at each hop count.")

TAXONOMIES = {"execution_rag": "ExecutionRAG (missing evidence, reasoning, gave up, judge error)",
              "read_gate:regex": "Read-Gate, regex entities (discipline, post-gold-read, retrieval, ambiguity)",
              "read_gate:spacy": "Read-Gate, spaCy entities"}
NEEDED = {"failure_breakdown", "hop_breakdown", "type_breakdown"}

state = require_warehouse()
if state and not NEEDED <= state.views:
    not_available("Breakdowns", "the views " + ", ".join(f"`{v}`" for v in sorted(NEEDED - state.views)))
elif state:
    runs = fetch(run_choices_sql())
    if runs is not None:
        c1, c2 = st.columns([3, 2])
        chosen = run_picker(runs.df, key="breakdowns-runs", default_count=4, container=c1)
        taxonomy = c2.selectbox("Taxonomy", list(TAXONOMIES), format_func=TAXONOMIES.__getitem__,
                                key="breakdowns-taxonomy",
                                index=list(TAXONOMIES).index(url_choice("taxonomy", list(TAXONOMIES), "execution_rag")))
        set_url("taxonomy", taxonomy if taxonomy != "execution_rag" else None)
        if chosen:
            labels = readable_run_names(runs.df, chosen)
            named = lambda df: df.with_columns(run=pl.col("run_id").replace_strict(labels))  # noqa: E731
            by_hop, by_type = st.columns(2, gap="large")
            for column, slice_, title in ((by_hop, "hop_count", "Hop count"),
                                          (by_type, "question_type", "Question type")):
                with column:
                    st.subheader(f"Failure causes by {title.lower()}")
                    result = fetch(failure_breakdown_sql(chosen, taxonomy, slice_))
                    if result is not None and result.df.height:
                        chart = stacked_share_chart(named(result.df), slice_title=title, run_field="run",
                                                    title=f"{TAXONOMIES[taxonomy].split(' (')[0]}")
                        figure_panel(chart, result, key=f"breakdown-{slice_}",
                                     stem=f"failures-by-{slice_}")
                        table_exports(result.df, key=f"breakdown-{slice_}-table",
                                      stem=f"failures-by-{slice_}")
                    elif result is not None:
                        st.caption("No failures in these runs.")
            st.divider()
            st.subheader("Evidence recall and accuracy by hop count")
            hops = fetch(hop_breakdown_sql(chosen))
            if hops is not None and hops.df.height:
                left, right = st.columns(2, gap="large")
                with left:
                    figure_panel(grouped_bar_chart(
                        named(hops.df), x="hop_count", y="hop_evidence_recall", group="run",
                        x_title="Hop count", y_title="Gold passages reached",
                        title="Evidence recall by hop"), hops, key="recall-by-hop", stem="recall-by-hop")
                with right:
                    figure_panel(grouped_bar_chart(
                        named(hops.df), x="hop_count", y="accuracy", group="run", x_title="Hop count",
                        y_title="Accuracy", title="Accuracy by hop"), hops, key="accuracy-by-hop",
                        stem="accuracy-by-hop")
                table_panel(hops, key="hop-table", stem="hop-breakdown", column_config={
                    "accuracy": st.column_config.NumberColumn(format="percent"),
                    "hop_evidence_recall": st.column_config.NumberColumn(format="percent")})
            st.subheader("By question type")
            types = fetch(type_breakdown_sql(chosen))
            if types is not None:
                table_panel(types, key="type-table", stem="type-breakdown", column_config={
                    c: st.column_config.NumberColumn(format="percent")
                    for c in ("accuracy", "contain_acc", "llm_acc", "hop_evidence_recall", "zero_read_final_rate")})
