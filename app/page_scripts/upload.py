"""Upload: drop a log, see its detected format, a validation report and a preview, then ingest it."""
from __future__ import annotations

import streamlit as st

from app.ui import app_config, page_header
from app.upload import CANONICAL, check_upload, ingest_upload, save_upload
from ingest.importers import FORMATS
from trajscope.format import RecordError
from warehouse import WarehouseBusy

page_header("Upload", "Drag and drop a trajectory log: canonical trajscope JSONL or an external format. "
            "It is validated and previewed before anything is written.")

config = app_config()
st.caption(f"Size limit {config.max_upload_mb} MB · formats: canonical JSONL, "
           + ", ".join(FORMATS))
uploaded = st.file_uploader("Trajectory log", key="upload-file",
                            type=["jsonl", "json", "ndjson", "txt", "log", "eval"])
options = ["auto", CANONICAL, *[name for name in FORMATS if name != "mapped"]]
left, right = st.columns(2)
chosen = left.selectbox("Format", options, key="upload-format",
                        format_func=lambda f: "detect automatically" if f == "auto" else f)
run_id = right.text_input("Run id for external logs (optional)", key="upload-run-id")

if uploaded is not None:
    data = uploaded.getvalue()
    if len(data) > config.max_upload_mb * 1024 * 1024:
        st.error(f"{uploaded.name}: {len(data) / 1e6:.1f} MB is over the {config.max_upload_mb} MB "
                 "upload limit (`trajscope app --max-upload-mb N`); ingest it with `trajscope ingest`.",
                 icon=":material/block:")
    else:
        path = save_upload(uploaded.name, data)
        with st.spinner("Validating every record…"):
            check = check_upload(path, format=None if chosen == "auto" else chosen, run_id=run_id)
        st.subheader("Validation report")
        a, b, c = st.columns(3)
        a.metric("Format", check.format or "unknown")
        b.metric("Valid records", f"{check.records:,}")
        c.metric("Errors", len(check.errors))
        if check.errors:
            st.error(f"{uploaded.name} did not validate; nothing was written. Fix the lines below."
                     + (" (stopped at the first error)" if check.stopped_early else ""), icon=":material/block:")
            st.dataframe(check.error_table(), hide_index=True, width="stretch", key="upload-errors")
        elif check.records == 0:
            st.warning(f"{uploaded.name} holds no trajectories.", icon=":material/inbox:")
        else:
            st.success(f"{uploaded.name}: {check.records:,} valid trajectories in format "
                       f"**{check.format}**.", icon=":material/check_circle:")
        if check.preview:
            st.subheader("Preview")
            st.dataframe(check.preview_table(), hide_index=True, width="stretch", key="upload-preview")
        if check.ok and st.button("Ingest into the warehouse", type="primary", key="upload-ingest",
                                  icon=":material/database_upload:"):
            try:
                with st.spinner("Ingesting (one transaction)…"):
                    report = ingest_upload(config.db_path, check, run_id=run_id)
            except (RecordError, WarehouseBusy) as exc:
                st.error(f"Not ingested: {exc}", icon=":material/block:")
            else:
                st.success(f"Ingested into `{config.db_path}`: {report.summary()}", icon=":material/inbox:")
                st.page_link("page_scripts/runs.py", label="See the runs", icon=":material/table_rows:")
