"""Runs: every run with its settings, size, accuracy and cost; filters and the selected run in the URL."""
from __future__ import annotations

import streamlit as st

from trajscope.app.queries import (
    CAPABILITIES,
    RunFilters,
    run_capabilities_sql,
    run_filter_options_sql,
    run_trajectories_sql,
    runs_sql,
    schema_columns_sql,
)
from trajscope.app.ui import (
    fetch,
    page_header,
    require_warehouse,
    set_url,
    sql_expander,
    table_exports,
    table_panel,
    url_list,
    url_value,
)

page_header("Runs", "Every run with its settings, size, accuracy and cost. Select a row to list its "
            "trajectories.")

PERCENT = st.column_config.NumberColumn(format="percent")


def _capability_section(run_ids: list[str]) -> None:
    """Each run's capability profile (yes / no / unknown, marked when declared) and the reasons behind it."""
    profile = fetch(run_capabilities_sql(run_ids))
    described = fetch(schema_columns_sql(["run_capabilities"]))
    if profile is None:
        return
    # Each column's tooltip is the warehouse's own description of it (COMMENT ON), not a copy kept here.
    helps = (dict(zip(described.df["column"], described.df["description"], strict=False))
             if described is not None else {})
    st.markdown("**What each run can be measured on** (from the log, inferred, or *(declared)*)")
    cells = profile.df.select("run_id", *CAPABILITIES, "profile_source")
    st.dataframe(cells, hide_index=True, key="runs-capabilities",
                 column_config={c: st.column_config.TextColumn(c.replace("_", " "), help=helps.get(c))
                                for c in CAPABILITIES})
    with st.expander("Why: the reason behind each capability"):
        st.dataframe(profile.df.select("run_id", *(f"{c}_reason" for c in CAPABILITIES)), hide_index=True,
                     key="runs-capability-reasons")
        sql_expander(profile.sql, seconds=profile.seconds)


if require_warehouse():
    options = fetch(run_filter_options_sql())
    if options is not None:
        row = options.df.row(0, named=True)
        chosen: dict[str, list[str]] = {}
        columns = st.columns(4)
        for column, name in zip(columns, ("dataset", "controller", "condition", "model"), strict=False):
            values = row[name] or []
            default = [v for v in url_list(name) if v in values]
            chosen[name] = column.multiselect(name.capitalize(), values, default=default,
                                              key=f"runs-filter-{name}", placeholder="All")
            set_url(name, chosen[name])
        runs = fetch(runs_sql(RunFilters(**chosen)))
        if runs is not None:
            st.subheader(f"{runs.df.height} run(s)")
            event = st.dataframe(
                runs.df, hide_index=True, on_select="rerun", selection_mode="single-row",
                key="runs-table",
                column_config={
                    "em": st.column_config.NumberColumn("EM", format="percent"),
                    "f1": st.column_config.NumberColumn("F1", format="percent"),
                    "contain_acc": st.column_config.NumberColumn("Contain-Acc", format="percent"),
                    "llm_acc": st.column_config.NumberColumn("LLM-Acc", format="percent"),
                    "zero_read_final_rate": st.column_config.NumberColumn("Zero-read final",
                                                                          format="percent"),
                    "mean_searches": st.column_config.NumberColumn("Searches", format="%.2f"),
                    "mean_reads": st.column_config.NumberColumn("Reads", format="%.2f"),
                    "mean_turns": st.column_config.NumberColumn("Turns", format="%.2f"),
                    "mean_tokens": st.column_config.NumberColumn("Tokens / q", format="%.0f"),
                    "cost_usd": st.column_config.NumberColumn("Cost", format="dollar"),
                    "cost_per_question": st.column_config.NumberColumn("Cost / q", format="$%.5f"),
                    "incurred_cost_usd": st.column_config.NumberColumn(
                        "Cost incurred", format="dollar",
                        help="Cost less the model calls a re-run served from the response cache"),
                    "cached_calls": st.column_config.NumberColumn(
                        "Cached calls", help="Model calls answered from the response cache (empty: not recorded)"),
                    "mean_latency_ms": st.column_config.NumberColumn("Latency ms", format="%.0f"),
                    "n_trajectories": st.column_config.NumberColumn("Trajectories"),
                },
            )
            sql_expander(runs.sql, seconds=runs.seconds)
            table_exports(runs.df, key="runs", stem="runs")
            _capability_section(runs.df["run_id"].to_list())

            run_ids = runs.df["run_id"].to_list()
            rows = event.selection.rows if event is not None else []
            selected = run_ids[rows[0]] if rows else url_value("run")
            if selected not in run_ids:
                selected = None
            set_url("run", selected)
            if selected:
                st.divider()
                st.subheader(f"Trajectories of `{selected}`")
                trajectories = fetch(run_trajectories_sql(selected))
                if trajectories is not None:
                    table_panel(
                        trajectories, key="run-trajectories", stem=f"trajectories-{selected}",
                        column_config={
                            "replay": st.column_config.LinkColumn("Replay", display_text="open ↗"),
                            "em": PERCENT, "f1": PERCENT, "contain": PERCENT, "llm": PERCENT,
                            "cost_usd": st.column_config.NumberColumn("cost", format="$%.5f"),
                        },
                    )
            else:
                st.caption("Select a run (click the row's left edge) to list its trajectories.")
