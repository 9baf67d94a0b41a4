"""Exports: warehouse tables for papers (CSV, Parquet, LaTeX, Markdown) and a run's trajectories with their labels;
output paths that never overwrite an input."""
from ._output import OutputRefused, check_output_path, write_output
from ._source_logs import source_logs
from ._tables import FORMATS, export_table, latex_escape, to_csv, to_latex, to_markdown, to_parquet, to_text
from ._traces import RunNotFound, exported_trajectories, run_trajectory_ids, trajectory_labels

__all__ = [
    "FORMATS", "OutputRefused", "RunNotFound", "check_output_path", "export_table", "exported_trajectories",
    "latex_escape", "run_trajectory_ids", "source_logs", "to_csv", "to_latex", "to_markdown", "to_parquet", "to_text",
    "trajectory_labels", "write_output",
]
