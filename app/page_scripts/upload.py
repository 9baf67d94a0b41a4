"""Upload: drop a log, see its format, the import report and a preview, then ingest it (converted once)."""
from __future__ import annotations

import hashlib

import streamlit as st

from trajscope.app.ui import app_config, page_header, show_error
from trajscope.app.upload import (
    UploadRootRefused,
    discard_upload,
    ingest_upload,
    prepare_upload,
    sweep_stale_uploads,
    upload_root,
)
from trajscope.format import CAPABILITY_NAMES, RecordError
from trajscope.ingest.importers import DATASET_HELP, FORMATS, profile_line
from trajscope.warehouse import NoRoomForIngest, WarehouseBusy

page_header("Upload", "Drag and drop a trajectory log: canonical trajscope JSONL or an external format. "
            "It is converted, reported and previewed before anything is written.")

config = app_config()
sweep_stale_uploads()  # uploads nobody ingested within UPLOAD_MAX_AGE_S, or of a server gone
try:
    upload_root()
except UploadRootRefused as exc:  # a link or another user's folder: nothing is saved (or swept) through it
    show_error(f"Uploads are off: {exc}", icon=":material/block:")
    st.stop()
st.caption(f"Size limit {config.max_upload_mb} MB · formats: " + ", ".join(n for n in FORMATS if n != "mapped"))
uploaded = st.file_uploader("Trajectory log", key="upload-file",
                            type=["jsonl", "json", "ndjson", "txt", "log", "eval", "traj"])
options = ["auto", *[name for name in FORMATS if name != "mapped"]]
left, middle, right = st.columns(3)
chosen = left.selectbox("Format", options, key="upload-format",
                        format_func=lambda f: "detect automatically" if f == "auto" else f)
run_id = middle.text_input("Run id for external logs (optional)", key="upload-run-id")
# Blank names no benchmark: the questions keep whatever dataset the log gives them.
dataset = right.text_input("Dataset (benchmark name)", key="upload-dataset", help=DATASET_HELP).strip() or None
with st.expander("Capabilities of this log (override what the importer infers)"):
    st.caption("What the agent could do decides which measures apply: without a read action, for example, "
               "discipline metrics do not apply and stay empty.")
    columns = st.columns(3)
    declared = {}
    for i, name in enumerate(CAPABILITY_NAMES):
        value = columns[i % 3].selectbox(name, ["inferred", "yes", "no"], key=f"upload-declare-{name}")
        if value != "inferred":
            declared[name] = value == "yes"

with st.expander("Mapping, questions and patterns files (as `trajscope ingest` takes them)"):
    st.caption("A **mapping** (YAML/JSON) reads a JSON/JSONL log of any shape; a **questions** file (JSON/JSONL "
               "with question ids, gold answers and golds) fills what a log lacks; a **patterns** file replaces "
               "the text-log patterns. See docs/importers.md.")
    side_columns = st.columns(3)
    sides = {
        role: side_columns[i].file_uploader(label, key=f"upload-{role}", type=types)
        for i, (role, label, types) in enumerate((
            ("mapping", "Mapping file", ["yaml", "yml", "json"]),
            ("questions", "Questions file", ["json", "jsonl", "ndjson"]),
            ("patterns", "Patterns file", ["yaml", "yml", "json", "txt"]),
        ))
    }
    per_run_questions = st.checkbox(
        "Keep each run's questions apart (--per-run-questions)", key="upload-per-run-questions",
        help="When runs state different golds for one question id, the import is refused; this stores them apart.")
side_files = {role: (f.name, f.getvalue()) for role, f in sides.items() if f is not None}

if uploaded is not None:
    data = uploaded.getvalue()
    if len(data) > config.max_upload_mb * 1024 * 1024:
        show_error(f"{uploaded.name}: {len(data) / 1e6:.1f} MB is over the {config.max_upload_mb} MB "
                 "upload limit (`trajscope app --max-upload-mb N`); ingest it with `trajscope ingest`.",
                 icon=":material/block:")
    else:
        # One conversion per upload and settings: a rerun (e.g. the ingest click) reuses it.
        key = (hashlib.sha256(data).hexdigest(), uploaded.name, chosen, run_id, tuple(sorted(declared.items())),
               tuple((role, name, hashlib.sha256(body).hexdigest()) for role, (name, body) in side_files.items()),
               per_run_questions, dataset)
        prepared = st.session_state.get("upload-prepared")
        expired = prepared is not None and prepared.ok and not prepared.canonical.exists()  # swept as abandoned
        if prepared is None or st.session_state.get("upload-prepared-key") != key or expired:
            if prepared is not None:
                discard_upload(prepared)
            with st.spinner("Converting and validating every record…"):
                prepared = prepare_upload(uploaded.name, data, format=None if chosen == "auto" else chosen,
                                          run_id=run_id, declare=declared, per_run_questions=per_run_questions,
                                          db_path=config.db_path, mapping=side_files.get("mapping"),
                                          questions=side_files.get("questions"), patterns=side_files.get("patterns"),
                                          dataset=dataset)
            st.session_state["upload-prepared"], st.session_state["upload-prepared-key"] = prepared, key
        st.subheader("Validation report")
        a, b, c = st.columns(3)
        a.metric("Format", prepared.format or "unknown")
        b.metric("Valid records", f"{prepared.records:,}")
        c.metric("Errors", len(prepared.errors))
        if prepared.errors:
            show_error(f"{prepared.name} did not validate; nothing was written. Fix the lines below "
                     "(the import stops at the first error).", icon=":material/block:")
            st.dataframe(prepared.error_table(), hide_index=True, width="stretch", key="upload-errors")
        elif prepared.records == 0:
            st.warning(f"{prepared.name} holds no trajectories.", icon=":material/inbox:")
        else:
            st.success(f"{prepared.name}: {prepared.records:,} valid trajectories in format "
                       f"**{prepared.format}**.", icon=":material/check_circle:")
        if prepared.report is not None:
            st.subheader("Import report")
            st.code("\n".join(prepared.report.lines()), language=None)
            for run in prepared.report.runs:
                st.caption(f"Run `{run.run_id}` capabilities: {profile_line(run.profile)}")
        if prepared.preview:
            st.subheader("Preview")
            st.dataframe(prepared.preview_table(), hide_index=True, width="stretch", key="upload-preview")
        if prepared.ok and st.button("Ingest into the warehouse", type="primary", key="upload-ingest",
                                     icon=":material/database_upload:"):
            try:
                with st.spinner("Ingesting (one transaction)…"):
                    report = ingest_upload(config.db_path, prepared)
            except (RecordError, WarehouseBusy, NoRoomForIngest) as exc:
                # ingest_upload deleted the converted log: the next rerun converts the file again.
                st.session_state.pop("upload-prepared", None)
                st.session_state.pop("upload-prepared-key", None)
                show_error(f"Not ingested: {exc}", icon=":material/block:")
            else:
                st.session_state.pop("upload-prepared", None)
                st.session_state.pop("upload-prepared-key", None)
                st.success(f"Ingested into `{config.db_path}`: {report.summary()}", icon=":material/inbox:")
                st.page_link("page_scripts/runs.py", label="See the runs", icon=":material/table_rows:")
elif "upload-prepared" in st.session_state:
    # The file was taken out of the uploader: its converted copy on the server goes with it.
    discard_upload(st.session_state.pop("upload-prepared"))
    st.session_state.pop("upload-prepared-key", None)

# Only the session state holds a pending upload: Streamlit keeps this script's globals (as __main__) after
# the run, and a reference here would keep the upload's folder past its session's end.
prepared = None
