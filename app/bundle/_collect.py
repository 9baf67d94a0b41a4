"""What a finding bundle holds: its tables (with their SQL), figures and the replays of the trajectories involved."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from trajscope.app.access import sql_literal
from trajscope.app.charts import chart_to_svg, failure_plane_chart, grouped_bar_chart
from trajscope.app.queries import (
    replay_candidates_sql,
    replay_header_sql,
    replay_judgments_sql,
    replay_labels_sql,
    replay_reads_sql,
    replay_register_sql,
    replay_steps_sql,
)
from trajscope.format import GATE_EXTRACTOR
from trajscope.warehouse import DEFAULT_LIMITS, ReadLimits, file_sha256, open_read, run_read_query
from trajscope.warehouse.read import to_polars

MAX_REPLAYS = 60  # a bundle is for a reviewer: beyond this many trajectories, name the rest without replays


@dataclass
class Table:
    """A query result shown as a table under its SQL."""

    title: str
    sql: str
    df: pl.DataFrame
    truncated: bool = False


@dataclass
class Figure:
    """A figure drawn from a query result, as inline SVG."""

    title: str
    sql: str
    svg: str


@dataclass
class Replay:
    """One trajectory as the replay page shows it: header, labels, verdicts, steps with what each saw."""

    trajectory_id: str
    header: dict[str, Any]
    labels: pl.DataFrame
    judgments: pl.DataFrame
    steps: list[dict[str, Any]]
    candidates: pl.DataFrame
    reads: pl.DataFrame
    register: pl.DataFrame


@dataclass
class Bundle:
    """Everything one finding file shows, and what identifies the warehouse it came from."""

    title: str
    db_name: str
    db_sha256: str
    db_bytes: int
    version: str
    tables: list[Table] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)
    replays: list[Replay] = field(default_factory=list)
    not_replayed: list[str] = field(default_factory=list)


def _in(values: list[str]) -> str:
    return ", ".join(sql_literal(v) for v in values)


def runs_tables_sql(run_ids: list[str]) -> dict[str, str]:
    """The tables of a comparison of runs: their summary, their failure plane, their trajectories."""
    runs = _in(run_ids)
    return {
        "Runs": f"""SELECT run_id, dataset, controller, condition, model, n_trajectories, em, f1, contain_acc,
       llm_acc, mean_reads, zero_read_final_rate
FROM run_summary WHERE run_id IN ({runs}) ORDER BY run_id""",
        "Failure plane": f"""SELECT run_id, condition, n_trajectories, n_wrong, n_disc, n_post, p_disc, p_post,
       p_disc_reason, p_post_reason
FROM failure_plane WHERE extractor = {sql_literal(GATE_EXTRACTOR)} AND run_id IN ({runs}) ORDER BY run_id""",
        "Trajectories": f"""SELECT c.trajectory_id, c.run_id, c.question_id, c.correct, rg.label AS read_gate_label,
       rg.discipline_subtype, e.label AS execution_rag_label, f.read_count, f.end_reason
FROM trajectory_correctness c
JOIN trajectory_facts f USING (trajectory_id)
LEFT JOIN failure_rg rg ON rg.trajectory_id = c.trajectory_id AND rg.extractor = {sql_literal(GATE_EXTRACTOR)}
LEFT JOIN trajectory_erag_label e ON e.trajectory_id = c.trajectory_id
WHERE c.run_id IN ({runs}) ORDER BY c.question_id, c.run_id""",
    }


def _accuracy_figure(con, run_ids: list[str], limits: ReadLimits) -> Figure:
    sql = f"""SELECT run_id, metric, value FROM (
    SELECT run_id, em, f1, contain_acc, llm_acc FROM run_summary WHERE run_id IN ({_in(run_ids)})
) UNPIVOT (value FOR metric IN (em, f1, contain_acc, llm_acc)) WHERE value IS NOT NULL ORDER BY run_id, metric"""
    df = _frame(con, sql, limits)
    chart = grouped_bar_chart(df, x="metric", y="value", group="run_id", x_title="Measure", y_title="Score",
                              title="Accuracy per run")
    return Figure("Accuracy per run", sql, chart_to_svg(chart))


def _plane_figure(con, run_ids: list[str], limits: ReadLimits) -> Figure | None:
    sql = f"""SELECT run_id, dataset, controller, condition, model, n_trajectories, n_wrong, p_disc, p_post
FROM failure_plane
WHERE extractor = {sql_literal(GATE_EXTRACTOR)} AND run_id IN ({_in(run_ids)}) AND p_disc IS NOT NULL
  AND p_post IS NOT NULL ORDER BY run_id"""
    points = _frame(con, sql, limits)
    if points.height == 0:
        return None
    arrows = pl.DataFrame(schema={"x": pl.Float64, "y": pl.Float64, "x2": pl.Float64, "y2": pl.Float64})
    base = points.filter(pl.col("condition") == "baseline")
    if base.height:
        b = base.row(0, named=True)
        others = points.filter(pl.col("run_id") != b["run_id"])
        arrows = pl.DataFrame({"x": [b["p_post"]] * others.height, "y": [b["p_disc"]] * others.height,
                               "x2": others["p_post"], "y2": others["p_disc"]},
                              schema={"x": pl.Float64, "y": pl.Float64, "x2": pl.Float64, "y2": pl.Float64})
    chart = failure_plane_chart(points, arrows, title="Failure plane (P_disc against P_post)")
    return Figure("Failure plane", sql, chart_to_svg(chart))


def query_figure(table: Table) -> Figure | None:
    """Bars of the result's first numeric column per its first text column, when it has both (at most 60 rows)."""
    df = table.df
    text = next((c for c, t in df.schema.items() if t == pl.String), None)
    number = next((c for c, t in df.schema.items() if t.is_numeric()), None)
    if text is None or number is None or not 0 < df.height <= 60:
        return None
    import altair as alt

    data = df.select(text, number).to_pandas()
    chart = alt.Chart(data).mark_bar().encode(
        x=alt.X(f"{text}:N", sort=None, title=text), y=alt.Y(f"{number}:Q", title=number),
        tooltip=[text, number]).properties(width=alt.Step(24), height=260, title=f"{number} by {text}")
    return Figure(f"{table.title}: {number} by {text}", table.sql, chart_to_svg(chart))


def _frame(con, sql: str, limits: ReadLimits) -> pl.DataFrame:
    # The whole result or a refusal (Reader.execute): a replay or a figure is never silently cut short.
    return to_polars(con.execute(sql).to_arrow_table())


def _replay(con, trajectory_id: str, limits: ReadLimits) -> Replay | None:
    header = _frame(con, replay_header_sql(trajectory_id), limits)
    if header.height == 0:
        return None
    steps = _frame(con, replay_steps_sql(trajectory_id), limits)
    return Replay(trajectory_id=trajectory_id, header=header.row(0, named=True),
                  labels=_frame(con, replay_labels_sql(trajectory_id), limits),
                  judgments=_frame(con, replay_judgments_sql(trajectory_id), limits),
                  steps=list(steps.iter_rows(named=True)),
                  candidates=_frame(con, replay_candidates_sql(trajectory_id), limits),
                  reads=_frame(con, replay_reads_sql(trajectory_id), limits),
                  register=_frame(con, replay_register_sql(trajectory_id), limits))


def involved_trajectories(df: pl.DataFrame, con, limits: ReadLimits) -> list[str]:
    """The trajectories a result names: its trajectory_id column, else its (run_id, question_id) pairs."""
    if "trajectory_id" in df.columns:
        ids = [v for v in df["trajectory_id"].to_list() if isinstance(v, str)]
    elif {"run_id", "question_id"} <= set(df.columns):
        pairs = [(r, q) for r, q in zip(df["run_id"].to_list(), df["question_id"].to_list(), strict=True)
                 if isinstance(r, str) and q is not None]
        if not pairs:
            return []
        wanted = ", ".join(f"({sql_literal(r)}, {sql_literal(str(q))})" for r, q in pairs[:5000])
        ids = _frame(con, f"""SELECT trajectory_id FROM trajectories
WHERE (run_id, question_id) IN ({wanted}) ORDER BY run_id, question_id""", limits)["trajectory_id"].to_list()
    else:
        return []
    return list(dict.fromkeys(ids))


def collect_bundle(db_path: Path, *, queries: list[str], run_ids: list[str], version: str, title: str | None = None,
                   limits: ReadLimits = DEFAULT_LIMITS, max_replays: int = MAX_REPLAYS) -> Bundle:
    """Run the bundle's queries read-only (a user's SQL in the isolated worker) and gather what it shows."""
    db_path = Path(db_path)
    bundle = Bundle(title=title or ("Runs " + ", ".join(run_ids) if run_ids else "Query result"),
                    db_name=db_path.name, db_sha256=file_sha256(db_path), db_bytes=db_path.stat().st_size,
                    version=version)
    for i, sql in enumerate(queries, start=1):
        result = run_read_query(db_path, sql, limits=limits)
        bundle.tables.append(Table(f"Query {i}" if len(queries) > 1 else "Query", result.sql, result.df,
                                   result.truncated))
    trajectories: list[str] = []
    with open_read(db_path, limits=limits) as con:
        if run_ids:
            known = set(_frame(con, f"SELECT run_id FROM runs WHERE run_id IN ({_in(run_ids)})", limits)["run_id"])
            missing = [r for r in run_ids if r not in known]
            if missing:
                raise LookupError(f"no run {', '.join(map(repr, missing))} in {db_path.name}")
            for name, sql in runs_tables_sql(run_ids).items():
                fetched = con.fetch(sql)
                bundle.tables.append(Table(name, sql, to_polars(fetched.table), fetched.truncated))
            bundle.figures.append(_accuracy_figure(con, run_ids, limits))
            plane = _plane_figure(con, run_ids, limits)
            if plane is not None:
                bundle.figures.append(plane)
        for table in bundle.tables[: len(queries)]:
            figure = query_figure(table)
            if figure is not None:
                bundle.figures.append(figure)
        for table in bundle.tables:
            trajectories.extend(involved_trajectories(table.df, con, limits))
        trajectories = list(dict.fromkeys(trajectories))
        for trajectory_id in trajectories[:max_replays]:
            replay = _replay(con, trajectory_id, limits)
            if replay is not None:
                bundle.replays.append(replay)
    bundle.not_replayed = trajectories[max_replays:]
    return bundle
