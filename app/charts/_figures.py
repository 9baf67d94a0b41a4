"""Figure specifications: each draws columns of a query result as they are (no aggregation here)."""
from __future__ import annotations

from typing import Final

import altair as alt
import polars as pl

_PALETTE: Final = "tableau10"
# The dashboard's half column a funnel figure sits in, in pixels; the y axis and its title take _AXIS_PX of it,
# a row facet's header _ROW_HEADER_PX more.
FUNNEL_COLUMN_PX = 360
_AXIS_PX = 90
_ROW_HEADER_PX = 32
_LEGEND_LABEL_PX = 300  # a run's readable name in a legend under a half-column figure


def failure_plane_chart(points: pl.DataFrame, arrows: pl.DataFrame, *, title: str) -> alt.LayerChart | alt.FacetChart:
    """P_disc (y) against P_post (x) per run, arrows from a baseline to its intervention runs."""
    top = max([0.05, *points["p_disc"].drop_nulls().to_list(), *points["p_post"].drop_nulls().to_list()])
    domain = [0, min(1.0, round(top * 1.15 + 0.005, 2))]
    x = alt.X("p_post:Q", title="P_post (post-gold-read failures)", scale=alt.Scale(domain=domain),
              axis=alt.Axis(format="%"))
    y = alt.Y("p_disc:Q", title="P_disc (discipline failures)", scale=alt.Scale(domain=domain),
              axis=alt.Axis(format="%"))
    pick = alt.selection_point(name="run", fields=["run_id"], on="click")
    dots = alt.Chart(points).mark_circle(size=140, opacity=0.9).encode(
        x=x, y=y,
        color=alt.Color("condition:N", scale=alt.Scale(scheme=_PALETTE), title="Condition"),
        tooltip=["run_id", "condition", "controller", "model", "n_trajectories", "n_wrong",
                 alt.Tooltip("p_disc:Q", format=".1%"), alt.Tooltip("p_post:Q", format=".1%")],
    ).add_params(pick)
    # Runs at the same point (a gate that never fired) share one label instead of overprinting.
    labels = alt.Chart(points).transform_aggregate(
        group="values(condition)", groupby=["p_post", "p_disc"]
    ).transform_calculate(
        conditions="join(pluck(datum.group, 'condition'), ' = ')"
    ).mark_text(align="left", dx=9, dy=-7, fontSize=11).encode(x="p_post:Q", y="p_disc:Q", text="conditions:N")
    layers: list[alt.Chart] = []
    if arrows.height:
        base = alt.Chart(arrows)
        layers.append(base.mark_rule(strokeWidth=1.6, color="#666").encode(
            x="x:Q", y="y:Q", x2="x2:Q", y2="y2:Q"))
        layers.append(base.transform_calculate(
            angle="90 - atan2(datum.y2 - datum.y, datum.x2 - datum.x) * 180 / PI"
        ).mark_point(shape="triangle", filled=True, size=90, color="#666").encode(
            x="x2:Q", y="y2:Q", angle=alt.Angle("angle:Q", scale=None)))
    return alt.layer(*layers, dots, labels).properties(width=380, height=380, title=title)


def stacked_share_chart(df: pl.DataFrame, *, slice_title: str, title: str, run_field: str = "run_id") -> alt.Chart:
    """Horizontal bars per slice value, stacked by failure label, one row of bars per run."""
    return alt.Chart(df).mark_bar().encode(
        x=alt.X("n:Q", stack="normalize", title="Share of failures", axis=alt.Axis(format="%")),
        y=alt.Y(f"{run_field}:N", title=None, axis=alt.Axis(labelLimit=170)),
        color=alt.Color("label:N", title="Failure cause", scale=alt.Scale(scheme=_PALETTE),
                        legend=alt.Legend(orient="bottom", columns=2)),
        row=alt.Row("slice_value:N", title=slice_title,
                    header=alt.Header(labelAngle=0, labelAlign="left", labelFontWeight="bold")),
        tooltip=["run_id", "slice_value", "label", "n", "n_failures", alt.Tooltip("share:Q", format=".1%")],
    ).properties(width=200, title=title)


def grouped_bar_chart(df: pl.DataFrame, *, x: str, y: str, group: str, x_title: str, y_title: str,
                      title: str, percent: bool = True) -> alt.Chart:
    """Bars of y per x, side by side per group."""
    axis = alt.Axis(format="%") if percent else alt.Axis()
    return alt.Chart(df).mark_bar().encode(
        x=alt.X(f"{x}:O", title=x_title),
        xOffset=alt.XOffset(f"{group}:N"),
        y=alt.Y(f"{y}:Q", title=y_title, axis=axis),
        color=alt.Color(f"{group}:N", title=group.replace("_", " ").capitalize(),
                        scale=alt.Scale(scheme=_PALETTE),
                        # Below the bars, a legend of 50 runs gets the height and width their names need.
                        legend=alt.Legend(orient="bottom", direction="vertical", labelLimit=_LEGEND_LABEL_PX)),
        tooltip=[group, x, alt.Tooltip(f"{y}:Q", format=".3f")],
    ).properties(width=alt.Step(28), height=300, title=title,
                 autosize=alt.AutoSizeParams(type="fit-x", contains="padding"))


def interval_chart(df: pl.DataFrame, *, prefix: str, category: str, group: str, title: str,
                   unit: str) -> alt.LayerChart | alt.FacetChart:
    """A point estimate with its CI bar per category, coloured by group (columns <prefix>_pts/_low/_high)."""
    base = alt.Chart(df).encode(
        y=alt.Y(f"{category}:N", title=None),
        yOffset=alt.YOffset(f"{group}:N"),
        color=alt.Color(f"{group}:N", scale=alt.Scale(scheme=_PALETTE), title=group),
    )
    bars = base.mark_rule(strokeWidth=2).encode(
        x=alt.X(f"{prefix}_low:Q", title=unit), x2=f"{prefix}_high:Q")
    dots = base.mark_point(filled=True, size=70).encode(
        x=f"{prefix}_pts:Q",
        tooltip=[category, group, alt.Tooltip(f"{prefix}_pts:Q", format=".2f"),
                 alt.Tooltip(f"{prefix}_low:Q", format=".2f"), alt.Tooltip(f"{prefix}_high:Q", format=".2f")])
    zero = alt.Chart(pl.DataFrame({"x": [0.0]})).mark_rule(color="#999", strokeDash=[4, 3]).encode(x="x:Q")
    return alt.layer(zero, bars, dots).properties(width=520, title=title)


def funnel_chart(df: pl.DataFrame, *, stages: tuple[str, ...], group: str, title: str,
                 facet: str | None = None, width: int = FUNNEL_COLUMN_PX) -> alt.Chart:
    """The evidence funnel: one bar per stage (in funnel order) per group, optionally one panel row per facet
    value. Every panel, and the legend below them, is narrower than `width` pixels (a dashboard column), so the
    figure fits its column whatever the number of hops and runs."""
    inner = width - _AXIS_PX - (_ROW_HEADER_PX if facet else 0)
    tooltip = [group, *(["run_id"] if "run_id" in df.columns and group != "run_id" else []), "stage:N",
               alt.Tooltip("share:Q", format=".1%"), "n_passages"]
    chart = alt.Chart(df).transform_fold(list(stages), as_=["stage", "share"]).mark_bar().encode(
        x=alt.X("stage:N", sort=list(stages), title=None, axis=alt.Axis(labelAngle=0, labelLimit=80)),
        xOffset=alt.XOffset(f"{group}:N"),
        y=alt.Y("share:Q", title="Share of gold passages", axis=alt.Axis(format="%"), scale=alt.Scale(domain=[0, 1])),
        color=alt.Color(f"{group}:N", title=group.replace("_", " ").capitalize(), scale=alt.Scale(scheme=_PALETTE),
                        legend=alt.Legend(orient="bottom", direction="vertical", labelLimit=inner - 30)),
        tooltip=tooltip,
    ).properties(width=inner, height=140 if facet else 220, title=title)
    if facet:
        return chart.facet(row=alt.Row(f"{facet}:O", title=facet.replace("_", " ").capitalize(),
                                       header=alt.Header(labelAngle=0, labelAlign="left")))
    # Fitted to its column's width only: fitted in height too (Streamlit's default), a long legend squashes the bars.
    return chart.properties(autosize=alt.AutoSizeParams(type="fit-x", contains="padding"))


def stage_change_chart(df: pl.DataFrame, *, stages: tuple[str, ...], title: str) -> alt.Chart:
    """Paired change (B - A) at each funnel stage, one panel row per scope (all hops, hop k)."""
    return alt.Chart(df).mark_bar().encode(
        x=alt.X("stage:N", sort=list(stages), title=None, axis=alt.Axis(labelAngle=0)),
        y=alt.Y("delta:Q", title="B − A (share of questions)", axis=alt.Axis(format="%")),
        color=alt.condition("datum.mcnemar_exact_p < 0.05", alt.value("#e15759"), alt.value("#9d9d9d")),
        row=alt.Row("scope:N", title=None, header=alt.Header(labelAngle=0, labelAlign="left")),
        tooltip=["scope", "stage", "n_pairs", alt.Tooltip("share_a:Q", format=".1%"),
                 alt.Tooltip("share_b:Q", format=".1%"), "a_only", "b_only",
                 alt.Tooltip("mcnemar_exact_p:Q", format=".3g")],
    ).properties(width=320, height=120, title=title)
