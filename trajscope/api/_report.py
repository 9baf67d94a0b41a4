"""A paper's tables from the warehouse: what `trajscope report` prints and `Warehouse.report` returns."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from trajscope.warehouse import ReadLimits

from ._results import CaptionedTable, ReportResult

if TYPE_CHECKING:
    from trajscope.analysis.report import ReportTable


def report_tables(db_path: str | Path, paper: str, run_ids: list[str], *, limits: ReadLimits, by: str = "dataset",
                  sweep: str | None = None, human_labels: dict[tuple[str, str], bool] | None = None,
                  only: Sequence[str] = ()) -> list[ReportTable]:
    """Every table of paper's report over run_ids (or only the named ones); ReportError names what cannot be built."""
    from trajscope.analysis.report import ReportError, build_report
    from trajscope.warehouse import open_read

    # The read path: an older warehouse is brought up to date, then read in the sandbox, each query
    # checked and stopped at the time limit.
    with open_read(db_path, limits=limits) as con:
        built = build_report(con, paper, run_ids, by=by, db_path=db_path, sweep=sweep,  # type: ignore[arg-type]
                             human_labels=human_labels or {})
    if only:
        unknown = sorted(set(only) - {t.name for t in built})
        if unknown:
            raise ReportError(
                f"unknown table(s) {', '.join(unknown)}; this report has {', '.join(t.name for t in built)}")
        built = [t for t in built if t.name in only]
    return built


@dataclass(frozen=True)
class PaperReport(ReportResult):
    """A report whose LaTeX and Markdown are the paper tables' own rendering (captions, footnotes, units)."""

    built: tuple[ReportTable, ...] = ()

    def to_latex(self, digits: int = 3) -> str:
        """Every table as `trajscope report --format latex` prints it (digits are the paper's, per column)."""
        from trajscope.analysis.report import render_all

        return render_all(list(self.built), "latex")

    def to_markdown(self, digits: int = 3) -> str:
        """Every table as `trajscope report --format markdown` prints it."""
        from trajscope.analysis.report import render_all

        return render_all(list(self.built), "markdown")


def report_result(paper: str, built: list[ReportTable]) -> PaperReport:
    """The tables as frames (the CSV columns at full precision) with their figures' Vega-Lite specs."""
    from trajscope.analysis.report import report_figures, to_frame

    tables = tuple(CaptionedTable(f"{t.title}. {t.caption}" + (f" (does not apply: {t.not_applicable})"
                                                                if t.not_applicable else ""), to_frame(t))
                   for t in built)
    figures = tuple(f.spec for f in report_figures(built))
    return PaperReport(tables, paper=paper, names=tuple(t.name for t in built), figures=figures, built=tuple(built))


__all__ = ["PaperReport", "report_result", "report_tables"]
