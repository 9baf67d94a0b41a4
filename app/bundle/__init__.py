"""A finding as one static HTML file: tables with their SQL, figures as inline SVG, replays with step anchors."""
from ._collect import MAX_REPLAYS, Bundle, Figure, Replay, Table, collect_bundle, file_sha256, runs_tables_sql
from ._html import MAX_TABLE_ROWS, render_bundle

__all__ = ["MAX_REPLAYS", "MAX_TABLE_ROWS", "Bundle", "Figure", "Replay", "Table", "collect_bundle", "file_sha256",
           "render_bundle", "runs_tables_sql"]
