"""Typed results of the notebook API: captioned tables with LaTeX, Markdown, an Altair chart and a rich display."""
from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import polars as pl

if TYPE_CHECKING:
    from typing import TypeAlias

    import altair as alt

    AnyChart: TypeAlias = alt.Chart | alt.LayerChart | alt.FacetChart


@dataclass(frozen=True)
class CaptionedTable:
    """One table of a result with the caption the CLI prints above it."""

    caption: str
    frame: pl.DataFrame


@dataclass(frozen=True)
class TableResult:
    """A question's answer as one or more captioned tables; `.table` is the first, the one the chart draws."""

    tables: tuple[CaptionedTable, ...]

    @property
    def table(self) -> pl.DataFrame:
        """The main table as a polars DataFrame (`.to_pandas()` where pandas is installed)."""
        return self.tables[0].frame if self.tables else pl.DataFrame()

    @property
    def caption(self) -> str:
        """The main table's caption."""
        return self.tables[0].caption if self.tables else ""

    def to_latex(self, digits: int = 3) -> str:
        """Every table as a booktabs `table` environment with its caption, as `--format latex` prints it."""
        from trajscope.warehouse.export import to_latex

        return "".join(to_latex(t.frame, caption=t.caption, float_digits=digits) for t in self.tables)

    def to_markdown(self, digits: int = 3) -> str:
        """Every table as Markdown under its caption, as the CLI prints it."""
        from trajscope.warehouse.export import to_markdown

        return "\n".join(f"{t.caption}\n\n{to_markdown(t.frame, float_digits=digits)}" for t in self.tables)

    def chart(self) -> AnyChart:
        """The main table as an Altair chart: a bar per row over the first numeric column."""
        return _bar_chart(self.table, title=self.caption)

    def _repr_html_(self) -> str:
        return "".join(f"<p><b>{html.escape(t.caption)}</b></p>{_frame_html(t.frame)}" for t in self.tables)

    def _repr_mimebundle_(self, include: Sequence[str] | None = None,
                          exclude: Sequence[str] | None = None) -> dict[str, str]:
        return {"text/html": self._repr_html_(), "text/plain": self.to_markdown()}


def _frame_html(frame: pl.DataFrame) -> str:
    # polars renders its own HTML table (escaped) as notebooks show DataFrames.
    rendered: str = frame._repr_html_()
    return rendered


def _bar_chart(frame: pl.DataFrame, *, title: str) -> alt.Chart:
    import altair as alt

    numeric = [c for c in frame.columns if frame.schema[c].is_numeric()]
    labels = [c for c in frame.columns if c not in numeric]
    if not numeric:
        raise ValueError(f"nothing to chart: the table has no numeric column ({', '.join(frame.columns)})")
    label = labels[0] if labels else frame.columns[0]
    chart: alt.Chart = alt.Chart(frame).mark_bar().encode(
        x=alt.X(f"{numeric[0]}:Q"), y=alt.Y(f"{label}:N", sort=None), tooltip=list(frame.columns),
    ).properties(title=_short(title), width=420)
    return chart


def _short(title: str, limit: int = 90) -> str:
    """A chart title cut to one readable line (captions can run to several sentences)."""
    return title if len(title) <= limit else title[: limit - 1] + "…"


@dataclass(frozen=True)
class CompareResult(TableResult):
    """`compare`: paired statistics of run B against run A (overall, then strata), and the optional tables."""

    run_a: str = ""
    run_b: str = ""
    metric: str = ""
    pairing: str = ""

    def chart(self) -> AnyChart:
        """The delta (B - A) per stratum with its 95% paired bootstrap CI."""
        import altair as alt

        frame = self.table.select("stratum", "n", "delta", "ci_low", "ci_high")
        base = alt.Chart(frame).encode(y=alt.Y("stratum:N", sort=None, title=None))
        bars = base.mark_rule(strokeWidth=2).encode(x=alt.X("ci_low:Q", title=f"delta ({self.metric}), B − A"),
                                                     x2="ci_high:Q")
        dots = base.mark_point(filled=True, size=70).encode(x="delta:Q", tooltip=list(frame.columns))
        zero = alt.Chart(pl.DataFrame({"x": [0.0]})).mark_rule(color="#999", strokeDash=[4, 3]).encode(x="x:Q")
        return alt.layer(zero, bars, dots).properties(width=420, title=f"{self.run_b} vs {self.run_a}")


@dataclass(frozen=True)
class AgreementResult(TableResult):
    """`agreement`: Cohen's kappa per rater pair and the pooled co-occurrence table (or agreement with people)."""

    def chart(self) -> AnyChart:
        """Kappa per rater pair (with people: step accuracy per method)."""
        import altair as alt

        frame = self.table
        if "kappa" in frame.columns and "agreement" in frame.columns:
            chart: alt.Chart = alt.Chart(frame).mark_bar().encode(
                x=alt.X("kappa:Q", scale=alt.Scale(domain=[-1, 1])), y=alt.Y("agreement:N", sort=None, title=None),
                tooltip=list(frame.columns)).properties(width=420, title="Cohen's kappa")
            return chart
        return _bar_chart(frame, title=self.caption)


@dataclass(frozen=True)
class ReportResult(TableResult):
    """`report`: a paper's tables by name (`.tables_by_name`), each as the CLI's CSV columns."""

    paper: str = ""
    names: tuple[str, ...] = ()
    figures: tuple[dict[str, Any], ...] = ()

    @property
    def tables_by_name(self) -> dict[str, pl.DataFrame]:
        """Each table's frame under its report name (e.g. rg_t1, er_t1)."""
        return {name: t.frame for name, t in zip(self.names, self.tables, strict=True)}

    def chart(self) -> AnyChart:
        """The report's first figure (its Vega-Lite spec as the CLI's --out writes it), else the first table."""
        import altair as alt

        if self.figures:
            return alt.Chart.from_dict(self.figures[0])
        return super().chart()


@dataclass(frozen=True)
class FunnelResult(TableResult):
    """`funnel`: stage shares of gold passages per run and hop, or two runs paired stage by stage."""

    stages: tuple[str, ...] = ()
    paired: bool = False

    def chart(self) -> AnyChart:
        """One run or several: bars per stage and run; two runs paired: the change at each stage per scope."""
        from trajscope.app.charts import funnel_chart, stage_change_chart

        if self.table.height == 0:
            raise ValueError("nothing to chart: no question of these runs has gold passages, so the funnel does not "
                             "apply")
        chart: AnyChart
        if self.paired:
            chart = stage_change_chart(self.table, stages=self.stages, title=_short(self.caption))
            return chart
        chart = funnel_chart(self.table.filter(pl.col("grouped_by") == "run"), stages=self.stages, group="run",
                             title="Evidence funnel")
        return chart


__all__ = ["AgreementResult", "CaptionedTable", "CompareResult", "FunnelResult", "ReportResult", "TableResult"]
