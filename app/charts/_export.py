"""Static images of Altair charts through vl-convert (no browser, no network)."""
from __future__ import annotations

import altair as alt
import vl_convert as vlc


def chart_to_png(chart: alt.TopLevelMixin, *, scale: float = 2.0) -> bytes:
    """PNG bytes of the chart (scale 2 for print)."""
    return vlc.vegalite_to_png(chart.to_json(), scale=scale)


def chart_to_svg(chart: alt.TopLevelMixin) -> str:
    """SVG text of the chart."""
    return vlc.vegalite_to_svg(chart.to_json())
