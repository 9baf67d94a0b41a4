"""Streamlit building blocks shared by the pages: layout, URL state, notices, tables and figures."""
from ._fetch import cached_queries, fetch, fetch_many, require_warehouse, warehouse_stamp
from ._layout import app_config, page_header
from ._notices import fill_warehouse_help, not_available, show_error, shown_refusal
from ._panels import figure_downloads, figure_panel, sql_expander, table_exports, table_panel
from ._run_picker import run_ids_help, run_picker
from ._url_state import set_url, url_choice, url_int, url_list, url_value

__all__ = [
    "app_config", "cached_queries", "fetch", "fetch_many", "figure_downloads", "figure_panel", "fill_warehouse_help",
    "not_available", "page_header", "show_error", "shown_refusal",
    "require_warehouse", "run_ids_help", "run_picker", "set_url", "sql_expander", "table_exports", "table_panel",
    "url_choice", "url_int", "url_list", "url_value", "warehouse_stamp",
]
