"""What the scanners read: the slice (a user's SQL condition, through the sandboxed read path) and each
trajectory's steps, passages and gold, as TrajectoryViews."""
from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from trajscope.warehouse import DEFAULT_LIMITS, ReadLimits, open_read, run_read_query
from trajscope.warehouse.verdicts import SLICE_RELATION, slice_sql

from ._render import StepView, TrajectoryView


def select_slice(db_path: str | Path | None, runs: Sequence[str], where: str | None = None,
                 limit: int | None = None, *, limits: ReadLimits = DEFAULT_LIMITS) -> tuple[str, list[str]]:
    """(the SQL, the trajectory ids): run in the bounded, sandboxed query worker, like `trajscope sql`."""
    sql = slice_sql(runs, where, limit)
    rows = limits.with_overrides(max_rows=max(limits.max_rows, (limit or 0) + 1, 1_000_000))
    result = run_read_query(db_path, sql, limits=rows, isolated=True)
    return result.sql, result.df["trajectory_id"].to_list() if result.df.height else []


def _step_columns(con) -> set[str]:
    return {r[0] for r in con.execute(
        "SELECT column_name FROM duckdb_columns() WHERE table_name = 'steps' AND NOT internal").fetchall()}


def read_views(db_path: str | Path | None, trajectory_ids: Sequence[str], *,
               limits: ReadLimits = DEFAULT_LIMITS) -> list[TrajectoryView]:
    """The TrajectoryViews of these ids, in the order given (ids no longer in the warehouse are left out)."""
    if not trajectory_ids:
        return []
    ids = {"ids": list(trajectory_ids)}
    with open_read(db_path, limits=limits) as con:
        columns = _step_columns(con)
        # source_ref (the log's own step reference) and agent come with importers that record them.
        ref = "s.source_ref" if "source_ref" in columns else "NULL"
        agent = "s.agent" if "agent" in columns else "NULL"
        heads = con.execute(
            "SELECT t.trajectory_id, t.record_hash, t.run_id, t.question_id, coalesce(q.text, ''), q.gold_answer, "
            "coalesce(q.aliases, []), t.final_answer, coalesce(q.gold_chunk_ids, []) "
            "FROM trajectories t LEFT JOIN questions q ON q.dataset = t.dataset AND q.question_id = t.question_id "
            "WHERE t.trajectory_id IN (SELECT unnest($ids))", ids).fetchall()
        steps = con.execute(
            f"SELECT s.trajectory_id, s.step_index, s.kind, {ref}, {agent}, s.tool_name, s.query, s.thought, "
            "s.observation, coalesce(s.answer, s.rejected_answer), coalesce(s.message, s.reason), s.args, s.raw "
            "FROM steps s WHERE s.trajectory_id IN (SELECT unnest($ids)) ORDER BY s.trajectory_id, s.step_index",
            ids).fetchall()
        snippets = con.execute(
            "SELECT trajectory_id, step_index, list(chunk_id ORDER BY rank), list(snippet ORDER BY rank) "
            "FROM candidates WHERE trajectory_id IN (SELECT unnest($ids)) GROUP BY ALL", ids).fetchall()
        passages = con.execute(
            "SELECT r.trajectory_id, r.step_index, list(r.chunk_id ORDER BY r.passage_index), "
            "list(coalesce(r.text, c.text) ORDER BY r.passage_index) "
            "FROM reads r JOIN trajectories t USING (trajectory_id) "
            "LEFT JOIN chunks c ON c.dataset = t.dataset AND c.chunk_id = r.chunk_id "
            "WHERE r.trajectory_id IN (SELECT unnest($ids)) GROUP BY ALL", ids).fetchall()
    hits = {(t, k): list(zip(c, s, strict=True)) for t, k, c, s in snippets}
    texts = {(t, k): list(zip(c, x, strict=True)) for t, k, c, x in passages}
    by_trajectory: dict[str, list[StepView]] = {}
    for tid, k, kind, source_ref, agent_name, tool, query, thought, obs, answer, message, args, raw in steps:
        by_trajectory.setdefault(tid, []).append(StepView(
            step_index=k, kind=kind, label=str(source_ref) if source_ref is not None else str(k), agent=agent_name,
            tool_name=tool, query=query, thought=thought, observation=obs, answer=answer, message=message, raw=raw,
            args=json.loads(args) if isinstance(args, str) else args, snippets=hits.get((tid, k), []),
            passages=texts.get((tid, k), []),
        ))
    for tid, found in by_trajectory.items():
        if len({s.label for s in found}) < len(found):
            # A log that reuses a reference for two steps: cite by index, so every citation names one step.
            by_trajectory[tid] = [replace(s, label=str(s.step_index)) for s in found]
    views = {
        h[0]: TrajectoryView(trajectory_id=h[0], record_hash=h[1], run_id=h[2], question_id=h[3], question=h[4],
                             gold=h[5], aliases=list(h[6]), final_answer=h[7], gold_chunk_ids=frozenset(h[8]),
                             steps=by_trajectory.get(h[0], []))
        for h in heads
    }
    return [views[t] for t in trajectory_ids if t in views]


_FUNNEL_COLUMNS = ("hop", "chunk_id", "queried_step", "retrieved_step", "best_rank", "snippet_shown_step",
                   "read_step", "used_step", "stage_reason")


def _relation_columns(con, name: str) -> list[str]:
    return [r[0] for r in con.execute(
        "SELECT column_name FROM duckdb_columns() WHERE table_name = ? AND NOT internal ORDER BY column_index",
        [name]).fetchall()]


def read_rule_hints(db_path: str | Path | None, trajectory_ids: Sequence[str], *,
                    limits: ReadLimits = DEFAULT_LIMITS) -> dict[str, str]:
    """Per trajectory, what the rules say, as text for the hybrid protocol: the evidence funnel per gold hop
    and the first decisive error's rule and step (empty where those views do not exist or have no row)."""
    if not trajectory_ids:
        return {}
    ids = {"ids": list(trajectory_ids)}
    lines: dict[str, list[str]] = {}
    with open_read(db_path, limits=limits) as con:
        funnel = [c for c in _FUNNEL_COLUMNS if c in _relation_columns(con, "evidence_funnel")]
        if "hop" in funnel:
            rows = con.execute(f"SELECT trajectory_id, {', '.join(funnel)} FROM evidence_funnel "
                               "WHERE trajectory_id IN (SELECT unnest($ids)) ORDER BY trajectory_id, hop", ids)
            for tid, *values in rows.fetchall():
                facts = ", ".join(f"{c} {v}" for c, v in zip(funnel, values, strict=True) if v is not None)
                lines.setdefault(tid, []).append(f"evidence funnel: {facts}")
        rule = _relation_columns(con, "first_decisive_error")
        if {"rule", "step_index"} <= set(rule):
            reason = "reason" if "reason" in rule else "NULL"
            rows = con.execute(f"SELECT trajectory_id, rule, step_index, {reason} FROM first_decisive_error "
                               "WHERE trajectory_id IN (SELECT unnest($ids))", ids)
            for tid, name, step, why in rows.fetchall():
                if name is not None:
                    at = f" at step index {step}" if step is not None else ""
                    lines.setdefault(tid, []).append(f"rule's candidate: {name}{at}" + (f" ({why})" if why else ""))
    return {tid: "\n".join(found) for tid, found in lines.items()}


__all__ = ["SLICE_RELATION", "read_rule_hints", "read_views", "select_slice", "slice_sql"]
