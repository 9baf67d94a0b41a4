"""Page state in the URL (st.query_params), so a copied link reopens the same view."""
from __future__ import annotations

from collections.abc import Sequence

import streamlit as st


def url_value(key: str) -> str | None:
    """A single value from the URL, or None."""
    value = st.query_params.get(key)
    return value or None


def url_list(key: str) -> list[str]:
    """All values of a repeated URL parameter."""
    return [v for v in st.query_params.get_all(key) if v]


def set_url(key: str, value: str | Sequence[str] | None) -> None:
    """Write a value (or list) to the URL; None or empty removes the parameter."""
    if value is None or (not isinstance(value, str) and len(value) == 0) or value == "":
        if key in st.query_params:
            del st.query_params[key]
        return
    current = st.query_params.get_all(key)
    wanted = [value] if isinstance(value, str) else list(value)
    if current != wanted:
        st.query_params[key] = wanted if len(wanted) > 1 else wanted[0]
