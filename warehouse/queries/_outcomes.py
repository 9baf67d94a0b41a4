"""Per-question outcomes of one run under a chosen metric, as the SQL that fetches them."""
from __future__ import annotations

from typing import Any

METRICS = ("correct", "contain", "em", "f1", "llm")
# Question-level columns a comparison may be stratified by, plus the baseline's read exposure.
STRATA = ("dataset", "question_type", "hop_count", "a_zero_read")


class QueryError(ValueError):
    """A query asked for something that does not exist (run, metric, stratum column)."""


def metric_expression(metric: str, forensics: str = "f", scores: str = "s") -> str:
    """SQL for the outcome of one trajectory under metric (0/1, or F1 in [0, 1]), given table aliases
    of trajectory_forensics and trajectory_scores."""
    if metric not in METRICS:
        raise QueryError(f"unknown metric {metric!r}; choose one of {', '.join(METRICS)}")
    if metric == "correct":
        return f"CASE WHEN {forensics}.correct THEN 1.0 WHEN NOT {forensics}.correct THEN 0.0 END"
    if metric in ("em", "f1"):
        return f"{scores}.{metric}"
    return f"{forensics}.{metric}"


def paired_outcomes_sql(metric: str) -> str:
    """One row per question both runs answered: id, stratum columns, outcome under A and under B."""
    expr_a = metric_expression(metric, "fa", "sa")
    expr_b = metric_expression(metric, "fb", "sb")
    return f"""SELECT fa.question_id,
       fa.dataset, fa.question_type, fa.hop_count,
       fa.read_count = 0 AS a_zero_read,
       fa.read_count AS a_read_count, fb.read_count AS b_read_count,
       {expr_a} AS outcome_a,
       {expr_b} AS outcome_b
FROM trajectory_forensics fa
JOIN trajectory_scores sa ON sa.trajectory_id = fa.trajectory_id
JOIN trajectory_forensics fb ON fb.question_id = fa.question_id AND fb.dataset = fa.dataset
JOIN trajectory_scores sb ON sb.trajectory_id = fb.trajectory_id
WHERE fa.run_id = $run_a AND fb.run_id = $run_b
ORDER BY fa.question_id"""


def run_question_ids_sql() -> str:
    """Question ids of one run (to report what a comparison could not pair)."""
    return "SELECT question_id FROM trajectories WHERE run_id = $run ORDER BY question_id"


def require_run(con: Any, run_id: str) -> None:
    """Raise QueryError naming the run when it has no trajectories."""
    n = con.execute("SELECT count(*) FROM trajectories WHERE run_id = ?", [run_id]).fetchone()[0]
    if not n:
        raise QueryError(f"no trajectories for run {run_id!r} in the warehouse")


__all__ = ["METRICS", "STRATA", "QueryError", "metric_expression", "paired_outcomes_sql", "require_run",
           "run_question_ids_sql"]
