"""What a page says when there is nothing to show: how to fill the warehouse, or what is still missing."""
from __future__ import annotations

import streamlit as st

from app.access import AppConfig


def fill_warehouse_help(config: AppConfig, *, exists: bool) -> None:
    """Guidance for a missing or empty warehouse (never an error)."""
    what = "has no trajectories yet" if exists else "does not exist yet"
    st.info(f"The warehouse `{config.db_path}` {what}. Fill it in any of these ways:", icon=":material/inbox:")
    st.markdown(
        f"""
- **Upload a log** on the *Upload* page (canonical JSONL or a supported external format).
- **Ingest from the command line:** `trajscope ingest LOG.jsonl --db {config.db_path}`
- **Run an experiment:** `trajscope run ... --db {config.db_path}`
- **Build the demo:** `make demo` (embedded model, bundled questions)

Then reload this page.
"""
    )


def not_available(what: str, needs: str) -> None:
    """A clear notice that a figure's warehouse view or query does not exist yet (no numbers faked)."""
    st.warning(f"**{what}: not available yet.** It needs {needs}, which this warehouse does not have.",
               icon=":material/construction:")


def show_error(message: str, icon: str | None = None) -> None:
    """st.error with the message redacted: no key or key fragment reaches a page (DuckDB quotes values)."""
    from trajscope.format import redact

    st.error(redact(message), icon=icon)
