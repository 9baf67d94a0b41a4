"""Figures rendered to SVG by vl-convert, the same renderer as the PNG / SVG downloads."""
from __future__ import annotations

import re

import polars as pl
import vl_convert as vlc

from trajscope.app.charts import failure_plane_chart


def _texts(svg: str) -> list[str]:
    return [t.strip() for t in re.findall(r"<text[^>]*>([^<]*)</text>", svg) if t.strip()]


def test_failure_plane_joins_the_labels_of_runs_at_the_same_point_and_skips_runs_without_p_disc() -> None:
    points = pl.DataFrame({
        "run_id": ["a", "b", "c", "d"], "condition": ["baseline", "read_gate", "register", "k5"],
        "controller": ["read_gate", "read_gate", "execution_rag", "vanilla_rag"], "model": ["m"] * 4,
        "n_trajectories": [10] * 4, "n_wrong": [9, 9, 10, 10],
        "p_post": [0.2, 0.2, 1.0, 1.0], "p_disc": [0.1, 0.1, 0.0, None],
    })
    arrows = pl.DataFrame({"dataset": ["demo"], "from_run": ["a"], "to_run": ["c"], "condition": ["register"],
                           "x": [0.2], "y": [0.1], "x2": [1.0], "y2": [0.0]})
    texts = _texts(vlc.vegalite_to_svg(failure_plane_chart(points, arrows, title="demo").to_json()))
    # One point label for the two coincident runs; "baseline" and "read_gate" alone appear only in the legend.
    assert texts.count("baseline = read_gate") == 1
    assert texts.count("baseline") == texts.count("read_gate") == 1
    assert texts.count("register") == 2  # its point label and its legend entry
    assert "k5" not in texts  # no P_disc: neither drawn nor labelled nor in the legend


def test_short_run_labels_add_detail_only_where_names_collide() -> None:
    from trajscope.app.charts import short_run_labels

    runs = pl.DataFrame({
        "run_id": ["demo-read_gate-baseline-9c2", "demo-read_gate-read_gate-da2", "hp-read_gate-baseline-1f0",
                   "demo-vanilla-k5-s1", "demo-vanilla-k5-s2", "imported"],
        "dataset": ["demo", "demo", "hotpotqa", "demo", "demo", "demo"],
        "controller": ["read_gate", "read_gate", "read_gate", "vanilla_rag", "vanilla_rag", None],
        "condition": ["baseline", "read_gate", "baseline", "k5", "k5", None],
    })
    assert short_run_labels(runs, ["demo-read_gate-baseline-9c2", "demo-read_gate-read_gate-da2", "imported"]) == {
        "demo-read_gate-baseline-9c2": "read_gate/baseline", "demo-read_gate-read_gate-da2": "read_gate/read_gate",
        "imported": "imported"}
    # The same condition on two datasets: the dataset tells them apart.
    assert short_run_labels(runs, ["demo-read_gate-baseline-9c2", "hp-read_gate-baseline-1f0"]) == {
        "demo-read_gate-baseline-9c2": "read_gate/baseline (demo)",
        "hp-read_gate-baseline-1f0": "read_gate/baseline (hotpotqa)"}
    # Two seeds of one condition on one dataset: only the run ids differ.
    assert short_run_labels(runs, ["demo-vanilla-k5-s1", "demo-vanilla-k5-s2"]) == {
        "demo-vanilla-k5-s1": "demo-vanilla-k5-s1", "demo-vanilla-k5-s2": "demo-vanilla-k5-s2"}
