"""The evidence-funnel stage table both papers' reports carry: per condition, the share of gold passages
reaching each stage, and the paired change per stage against the condition's reference (McNemar)."""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from trajscope.analysis.queries import FUNNEL_STAGES
from trajscope.analysis.stats import pooled_mcnemar, transition_table

from ._context import ReportContext, RunInfo, sql_file
from ._paired import seed_pairs
from ._table import Column, ReportTable, does_not_apply

PTS = 100.0
STAGE_LABELS = {"queried": "Queried for", "retrieved": "Retrieved", "snippet_shown": "Snippet shown",
                "read": "Read", "used": "Used"}
COLUMNS = (
    Column("dataset", "Dataset", "text"),
    Column("condition", "Condition", "text"),
    Column("stage", "Stage", "text"),
    Column("n_passages", "n passages", "int"),
    Column("reached", "Reached (%)"),
    Column("reference", "vs", "text"),
    Column("n_questions", "n paired", "int"),
    Column("delta", "Δ paired (pp)", "signed"),
    Column("gained", "Gained", "int"),
    Column("lost", "Lost", "int"),
    Column("mcnemar_p", "McNemar p", "p"),
    Column("not_applicable", "Does not apply", "text"),
)
NOTE = (
    "Reached: share of the condition's (trajectory, gold passage) rows reaching the stage (evidence_funnel), "
    "seeds pooled, over the rows where the stage applies. Paired: on the questions both conditions answered "
    "(seed s with seed s), a question reaches a stage when every gold passage does "
    "(evidence_funnel_question, scope all); Δ = share under the condition minus under its reference; "
    "gained / lost: questions reaching it under the condition only / the reference only; McNemar exact p on "
    "those discordant questions summed over seed pairs (pooled_mcnemar). A stage the log cannot show "
    "(no candidate ids, no read action) says so and is never counted as 0."
)


@dataclass(frozen=True)
class FunnelArm:
    """One condition of a group and, when it is paired, the condition it is compared with."""

    group: str
    label: str
    runs: list[RunInfo]
    reference: FunnelArm | None = None


def _paired(ctx: ReportContext, arm: FunnelArm) -> dict[str, list[tuple[int, int, int]]]:
    """Per stage: each seed pair's (questions paired, lost, gained) against the arm's reference, on the
    questions both answered where the stage applies to both (transition_table, as every paired report cell)."""
    assert arm.reference is not None
    questions = ctx.query("report_funnel_questions")
    out: dict[str, list[tuple[int, int, int]]] = {}
    for ref_run, run in seed_pairs(arm.reference.runs, arm.runs):
        a = questions.filter(pl.col("run_id") == ref_run.run_id).drop("run_id")
        b = questions.filter(pl.col("run_id") == run.run_id).drop("run_id")
        joined = a.join(b, on=["question_id", "dataset"], how="inner", suffix="_b")
        for stage in FUNNEL_STAGES:
            pairs = joined.drop_nulls([stage, f"{stage}_b"])
            if pairs.height:
                cells = transition_table(pairs["question_id"].to_list(), pairs[stage].cast(pl.Float64).to_numpy(),
                                         pairs[f"{stage}_b"].cast(pl.Float64).to_numpy())
                out.setdefault(stage, []).append((pairs.height, len(cells.a_only), len(cells.b_only)))
    return out


def funnel_table(ctx: ReportContext, name: str, title: str, caption: str, arms: list[FunnelArm]) -> ReportTable:
    """One row per (group, condition, stage); arms with a reference get the paired columns."""
    sql = sql_file("report_funnel") + "\n" + sql_file("report_funnel_questions")
    counts = {r["run_id"]: r for r in ctx.query("report_funnel").iter_rows(named=True)}
    if not any(r.run_id in counts for arm in arms for r in arm.runs):
        return does_not_apply(name, title, caption, COLUMNS,
                              "no chosen run has gold passages (evidence_funnel holds no row for them)", sql)
    rows, used, n_total = [], [], 0
    for arm in arms:
        members = [counts[r.run_id] for r in arm.runs if r.run_id in counts]
        used += arm.runs
        n_total += sum(m["n_trajectories"] for m in members)
        paired = _paired(ctx, arm) if arm.reference is not None and members else {}
        for stage in FUNNEL_STAGES:
            applies = sum(m[f"{stage}_applies"] for m in members)
            reached = sum(m[f"{stage}_reached"] for m in members)
            reason = None
            if not members:
                reason = "no gold passages in these runs"
            elif applies == 0:
                reason = f"{stage} does not apply: " + next(m[f"{stage}_reason"] for m in members)
            elif applies < sum(m["n_passages"] for m in members):
                skipped = [m["run_id"] for m in members if m[f"{stage}_applies"] == 0]
                if skipped:
                    reason = f"not in {', '.join(skipped)}: {stage} does not apply: " + next(
                        m[f"{stage}_reason"] for m in members if m["run_id"] in skipped)
            row: list[object] = [arm.group, arm.label, STAGE_LABELS[stage], applies,
                                 PTS * reached / applies if applies else None]
            if arm.reference is None:
                row += [None, None, None, None, None, None]
            else:
                per_seed = paired.get(stage, [])
                n = sum(k for k, _, _ in per_seed)
                if n:
                    # McNemar's discordant questions summed over the seed pairs: the one pooled definition.
                    test = pooled_mcnemar([(a_only, b_only) for _, a_only, b_only in per_seed]).result
                    gained, lost = test.b_only, test.a_only
                    row += [arm.reference.label, n, PTS * (gained - lost) / n, gained, lost, test.exact_p]
                else:
                    row += [arm.reference.label, 0, None, None, None, None]
                    if reason is None:
                        reason = f"no shared question where the stage applies under both (vs {arm.reference.label})"
            row.append(reason)
            rows.append(tuple(row))
    return ReportTable(name, title, caption, COLUMNS, tuple(rows), ctx.footnote(used, n_total, NOTE), sql)


__all__ = ["COLUMNS", "STAGE_LABELS", "FunnelArm", "funnel_table"]
