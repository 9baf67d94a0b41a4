"""Evidence funnel page and the Replay funnel: SQL over evidence_funnel* and first_decisive_error* views."""
from __future__ import annotations

from trajscope.app.access import sql_literal


def _runs_clause(run_ids: list[str]) -> str:
    return f"run_id IN ({', '.join(sql_literal(r) for r in run_ids)})"


def funnel_summary_sql(run_ids: list[str]) -> str:
    """Stage shares per run (grouped_by run), per run and hop (hop) and per question type, in one query."""
    return f"""SELECT grouped_by, run_id, hop, question_type, n_trajectories, n_passages,
       queried, retrieved, snippet_shown, read, used, mean_best_rank
FROM evidence_funnel_summary
WHERE {_runs_clause(run_ids)}
ORDER BY grouped_by, run_id, hop, question_type"""


def decisive_error_summary_sql(run_ids: list[str]) -> str:
    """First-decisive-error rule counts per run (grouped_by rule) and beside the ExecutionRAG labels, in one query;
    slice_value / label / n_failures are the stacked share chart's columns."""
    return f"""SELECT grouped_by, run_id, rule, erag_label, n, share, n_wrong,
       'all wrong answers' AS slice_value, rule AS label, n_wrong AS n_failures
FROM first_decisive_error_summary
WHERE {_runs_clause(run_ids)}
ORDER BY grouped_by, run_id, n DESC, rule, erag_label"""


def replay_funnel_sql(trajectory_id: str) -> str:
    """The trajectory's gold passages in hop order with the step of each funnel stage."""
    return f"""SELECT hop, chunk_id, title, queried_step, retrieved_step, best_rank, snippet_shown_step,
       read_step, read_via, used_step, used_via, bridge_entity, answer_entities, hop_order, stage_reason
FROM evidence_funnel
WHERE trajectory_id = {sql_literal(trajectory_id)}
ORDER BY hop"""


def replay_decisive_sql(trajectory_id: str) -> str:
    """The trajectory's first decisive error (no row when it is right)."""
    return f"""SELECT rule, step_index, hop, chunk_id, answered_entity, confusion, missing_capability, reason,
       erag_label
FROM first_decisive_error
WHERE trajectory_id = {sql_literal(trajectory_id)}"""


def replay_human_labels_sql(trajectory_id: str) -> str:
    """Human step labels of the trajectory (table human_step_labels, where the warehouse has it)."""
    return f"""SELECT step_index, source_ref, label, category, agent, annotator, source, reason
FROM human_step_labels
WHERE trajectory_id = {sql_literal(trajectory_id)}
ORDER BY ordinal"""


__all__ = ["decisive_error_summary_sql", "funnel_summary_sql", "replay_decisive_sql",
           "replay_funnel_sql", "replay_human_labels_sql"]
