"""Altair figures of warehouse query results, and their export to PNG and SVG."""
from ._export import chart_to_png, chart_to_svg
from ._figures import (
    failure_plane_chart,
    funnel_chart,
    grouped_bar_chart,
    interval_chart,
    stacked_share_chart,
    stage_change_chart,
)
from ._labels import readable_run_names, short_run_labels

__all__ = [
    "chart_to_png", "chart_to_svg", "failure_plane_chart", "funnel_chart", "grouped_bar_chart", "interval_chart",
    "readable_run_names", "short_run_labels", "stacked_share_chart", "stage_change_chart",
]
