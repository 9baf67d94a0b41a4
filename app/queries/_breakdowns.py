"""Breakdowns page: failure causes of both taxonomies by hop count and question type; recall by hop."""
from __future__ import annotations

from trajscope.app.access import sql_literal


def _runs_clause(run_ids: list[str]) -> str:
    return f"run_id IN ({', '.join(sql_literal(r) for r in run_ids)})"


def failure_breakdown_sql(run_ids: list[str], taxonomy: str, slice_: str) -> str:
    """Failure label counts and shares per run and slice value from the failure_breakdown view."""
    return f"""SELECT run_id, dataset, slice_value, label, n, n_failures, share
FROM failure_breakdown
WHERE {_runs_clause(run_ids)}
  AND taxonomy = {sql_literal(taxonomy)}
  AND slice = {sql_literal(slice_)}
ORDER BY run_id, slice_value, label"""


def hop_breakdown_sql(run_ids: list[str]) -> str:
    """Accuracy and hop-level evidence recall per run and hop count from the hop_breakdown view."""
    return f"""SELECT run_id, dataset, hop_count, n, accuracy, hop_evidence_recall, n_failures,
       judge_error, gave_up, reasoning_error, missing_evidence, no_gold_evidence
FROM hop_breakdown
WHERE {_runs_clause(run_ids)}
ORDER BY run_id, hop_count"""


def type_breakdown_sql(run_ids: list[str]) -> str:
    """Accuracy, recall and zero-read rate per run and question type from the type_breakdown view."""
    return f"""SELECT run_id, dataset, question_type, n, accuracy, contain_acc, llm_acc,
       hop_evidence_recall, zero_read_final_rate, zero_read_reason, n_failures
FROM type_breakdown
WHERE {_runs_clause(run_ids)}
ORDER BY run_id, question_type"""
