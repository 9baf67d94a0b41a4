"""Exports of warehouse tables for papers: CSV, Parquet, LaTeX (booktabs), Markdown."""
from ._tables import FORMATS, export_table, latex_escape, to_csv, to_latex, to_markdown, to_parquet, to_text

__all__ = [
    "FORMATS", "export_table", "latex_escape", "to_csv", "to_latex", "to_markdown", "to_parquet", "to_text",
]
