"""SQL console: read-only, sandboxed queries against the warehouse with a time limit and a row cap."""
from __future__ import annotations

import streamlit as st

from trajscope.app.console import run_console_query
from trajscope.app.queries import schema_columns_sql, schema_relations_sql
from trajscope.app.ui import (
    app_config,
    fetch,
    page_header,
    require_warehouse,
    set_url,
    shown_refusal,
    sql_expander,
    table_exports,
    url_value,
)

page_header("SQL console", "Read-only SQL over the warehouse's tables and named views. No writes, no "
            "server files, no network, no extensions.")


def _schema_browser() -> None:
    """Sidebar: every view and table with its stored description; one relation's columns, types and descriptions."""
    relations = fetch(schema_relations_sql())
    if relations is None:
        return
    with st.sidebar:
        st.subheader("Schema")
        df = relations.df
        st.dataframe(df, hide_index=True, key="schema-relations", height=260,
                     column_config={"description": st.column_config.TextColumn(width="large")})
        names = df["name"].to_list()
        current = url_value("relation")
        name = st.selectbox("Columns of", names, key="schema-relation",
                            index=names.index(current) if current in names else None,
                            placeholder="Choose a view or table")
        set_url("relation", name)
        if name:
            row = df.row(names.index(name), named=True)
            st.markdown(f"**`{name}`** ({row['kind']}): {row['description'] or '*no description stored*'}")
            columns = fetch(schema_columns_sql([name]))
            if columns is not None:
                st.dataframe(columns.df.select("column", "type", "description"), hide_index=True,
                             key="schema-columns")


config = app_config()
state = require_warehouse()
if state:
    _schema_browser()
    default = url_value("sql") or "SELECT * FROM run_summary ORDER BY run_id LIMIT 50"
    with st.form("console-form"):
        sql = st.text_area("SQL", value=default, height=160, key="console-sql")
        submitted = st.form_submit_button("Run query", type="primary", icon=":material/play_arrow:")
    st.caption(f"Limits: {config.sql_timeout_s:g} s per query, {config.sql_row_cap:,} rows and "
               f"{config.sql_max_mb:g} MB shown and downloaded, {config.memory_limit_mb:,} MB of memory, "
               f"{config.max_temp_mb:,} MB of temp disk. One SELECT per query.")
    if url_value("sql") and not submitted:
        # A link that carries SQL fills the editor; it runs only when the user presses Run.
        st.info("This link carries a query: review it, then press Run query.", icon=":material/link:")
    if submitted:
        set_url("sql", sql.strip())
        result = shown_refusal(lambda: run_console_query(config.db_path, sql, timeout_s=config.sql_timeout_s,
                                                         row_cap=config.sql_row_cap, lock_wait_s=config.lock_wait_s,
                                                         limits=config.console_limits()))
        if result is not None:
            note = f" — showing the first {config.sql_row_cap:,} (row cap)" if result.truncated else ""
            st.markdown(f"**{result.df.height:,} row(s){note}** in {result.seconds * 1000:.0f} ms")
            if result.as_text:
                st.caption(f"Shown as text (a type the table cannot hold): {', '.join(result.as_text)}")
            st.dataframe(result.df, hide_index=True, key="console-result")
            sql_expander(result.sql)
            table_exports(result.df, key="console", stem="query")
