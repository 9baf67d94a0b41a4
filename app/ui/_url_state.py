"""Page state in the URL (st.query_params), so a copied link reopens the same view."""
from __future__ import annotations

from collections.abc import Sequence

import streamlit as st


def url_value(key: str) -> str | None:
    """A single value from the URL, or None."""
    value = st.query_params.get(key)
    return value or None


def ignored_url_value(key: str, value: str, why: str) -> None:
    """Name a URL value the page cannot use, and why, instead of dropping it silently."""
    st.warning(f"URL parameter `{key}={value[:80]}` ignored: {why}.", icon=":material/link_off:")


def url_choice(key: str, choices: Sequence[str], default: str) -> str:
    """A URL value that must be one of `choices`; any other is named in a warning and `default` used."""
    value = url_value(key)
    if value is None or value in choices:
        return value or default
    shown = ", ".join(choices[:12]) + (" …" if len(choices) > 12 else "")
    ignored_url_value(key, value, f"not one of {shown}; showing {default or 'none'}")
    return default


def url_int(key: str, default: int, low: int, high: int) -> int:
    """A whole-number URL value within [low, high]; anything else is named in a warning and `default` used."""
    value = url_value(key)
    if value is None:
        return default
    try:
        number = int(value)
    except ValueError:
        ignored_url_value(key, value, f"not a whole number; using {default:,}")
        return default
    if not low <= number <= high:
        ignored_url_value(key, value, f"outside {low:,}–{high:,}; using {default:,}")
        return default
    return number


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
