"""Intervention audit: the answer-presence audit's tables and its causal and insertion plots."""
from __future__ import annotations

import duckdb
import streamlit as st

from trajscope.analysis.report import audit_tables, to_frame
from trajscope.app.access import read_connection
from trajscope.app.charts import interval_chart
from trajscope.app.ui import (
    app_config,
    fetch,
    figure_downloads,
    fill_warehouse_help,
    page_header,
    show_error,
    table_exports,
)
from trajscope.warehouse import WarehouseBusy

page_header("Intervention audit", "Does the reader's F1 depend on the gold answer string being in the "
            "rewritten context? Remove vs placebo on the 1→1 stratum, insertion on 0→0, and the "
            "sentinel panel.")

# Interval columns of the audit tables (key, key_low, key_high), plotted as a point with its CI bar.
PLOTS = {"causal": ("causal", "Causal delta (remove − placebo), 1→1 stratum"),
         "insertion": ("prepend", "Insertion of the gold in the 0→0 bucket (prepend)")}

config = app_config()
counts = fetch("SELECT count(*) AS n_records FROM audit_records") if config.db_path.exists() else None
if not config.db_path.exists():
    fill_warehouse_help(config, exists=False)
elif counts is not None and counts.df["n_records"][0] == 0:
    st.info("No audit records in this warehouse yet. Run the audit with `trajscope audit ...` and "
            "load its log; the tables and plots appear here.", icon=":material/science:")
elif counts is not None:
    try:
        with read_connection(config.db_path, lock_wait_s=config.lock_wait_s) as con:
            tables = audit_tables(con, db_path=config.db_path)
    except WarehouseBusy as exc:
        st.warning(str(exc), icon=":material/hourglass_top:")
        tables = {}
    except duckdb.Error as exc:
        show_error(f"The audit tables failed: {str(exc).splitlines()[0]}", icon=":material/warning:")
        tables = {}
    frames = {name: to_frame(table) for name, table in tables.items()}
    plots = st.columns(len(PLOTS), gap="large")
    for column, (name, (prefix, title)) in zip(plots, PLOTS.items(), strict=False):
        df = frames.get(name)
        if df is None or prefix not in df.columns or df.height == 0:
            continue
        with column:
            chart = interval_chart(df.drop_nulls(prefix).rename({prefix: f"{prefix}_pts"}), prefix=prefix,
                                   category="cell", group="baseline", title=title, unit="F1 points")
            st.altair_chart(chart, key=f"audit-{name}-chart")
            figure_downloads(chart, key=f"audit-{name}", stem=f"audit-{name}")
    for name, table in tables.items():
        st.subheader(f"{table.title}. {table.caption}")
        if table.not_applicable:
            st.info(f"Does not apply: {table.not_applicable}", icon=":material/block:")
            continue
        st.dataframe(frames[name], hide_index=True, key=f"audit-{name}")
        for note in (*table.notes, table.footnote):
            if note:
                st.caption(note)
        with st.expander("Show source"):
            st.caption(f"`trajscope audit-report --table {name}` (analysis.report.audit_tables): the bootstrap "
                       "runs in Python over the audit_* views.")
            st.code(table.sql, language="sql")
        table_exports(frames[name], key=f"audit-{name}-x", stem=f"audit-{name}")
