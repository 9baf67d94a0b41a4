"""What a page says when there is nothing to show: how to fill the warehouse, or what is still missing."""
from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import streamlit as st

from trajscope.app.access import AppConfig
from trajscope.warehouse import ForbiddenStatement, LimitExceeded, ReadRefused, WarehouseBusy, WarehouseMissing

T = TypeVar("T")


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


def shown_refusal(read: Callable[[], T]) -> T | None:
    """Run a read of SQL the user typed (console, export filter); a refusal, a limit or a busy warehouse
    is said on the page and gives None."""
    try:
        return read()
    except ForbiddenStatement as exc:
        show_error(f"Refused: {exc}", icon=":material/block:")
    except LimitExceeded as exc:
        show_error(f"Stopped at a limit: {exc}", icon=":material/timer:")
    except (WarehouseBusy, WarehouseMissing) as exc:
        st.warning(str(exc), icon=":material/hourglass_top:")
    except ReadRefused as exc:
        show_error(f"Query failed: {exc}", icon=":material/warning:")
    return None
