"""Per-question outcomes of one run under a chosen metric, as the SQL that fetches them."""
from __future__ import annotations

import re
from typing import Any

from trajscope.format import COMPARE_METRICS, DEFAULT_COMPARE_METRIC

METRICS = COMPARE_METRICS
# Question-level columns a comparison may be stratified by, plus the baseline's read exposure.
STRATA = ("dataset", "question_type", "hop_count", "a_zero_read")


class QueryError(ValueError):
    """A query asked for something that does not exist (run, metric, stratum column)."""


def _sql_text(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def resolve_rubric_metric(con: Any, metric: str, runs: tuple[str, ...]) -> str:
    """'rubric:PREFIX[:MODEL]' -> 'rubric:HASH:MODEL:PROMPT_VERSION', the one rubric scan both runs were given.

    The outcome is rubric_verdicts.matches (1 match, 0 no_match; unsure and error verdicts are left out).
    """
    _, _, rest = metric.partition(":")
    prefix, _, model = rest.partition(":")
    if not re.fullmatch(r"[0-9a-f]{4,16}", prefix):
        raise QueryError(f"rubric {prefix!r}: give the rubric's hash (4 to 16 hex digits, see rubric_verdicts)")
    found = con.execute(
        "SELECT rubric_hash, model, prompt_version, count(DISTINCT run_id) FROM rubric_verdicts "
        "WHERE starts_with(rubric_hash, $p) AND ($m = '' OR model = $m) AND run_id IN (SELECT unnest($runs)) "
        "GROUP BY ALL ORDER BY ALL", {"p": prefix, "m": model, "runs": list(runs)}).fetchall()
    both = [r for r in found if r[3] == len(set(runs))]
    if not both:
        raise QueryError(f"no rubric {prefix}{':' + model if model else ''} scanned in both runs "
                         f"(trajscope scan RUBRIC --runs {' --runs '.join(runs)})")
    if len(both) > 1:
        options = ", ".join(f"{h}:{m} ({v})" for h, m, v, _ in both)
        raise QueryError(f"rubric {prefix} is ambiguous: {options}; name it as HASH:MODEL")
    h, m, v, _ = both[0]
    return f"rubric:{h}:{m}:{v}"


def _rubric_join(metric: str) -> str:
    _, h, rest = metric.split(":", 2)
    m, v = rest.rsplit(":", 1)  # a model name may hold colons (ft:...), the prompt version never does
    return (f"\n    LEFT JOIN rubric_verdicts rv ON rv.trajectory_id = f.trajectory_id"
            f" AND rv.rubric_hash = {_sql_text(h)} AND rv.model = {_sql_text(m)}"
            f" AND rv.prompt_version = {_sql_text(v)}")


def metric_expression(metric: str, forensics: str = "f", scores: str = "s") -> str:
    """SQL for the outcome of one trajectory under metric (0/1, or F1 in [0, 1]), given table aliases
    of trajectory_forensics and trajectory_scores."""
    if metric.startswith("rubric:") and metric.count(":") >= 3:
        return "CAST(rv.matches AS DOUBLE)"
    if metric not in METRICS:
        raise QueryError(f"unknown metric {metric!r}; choose one of {', '.join(METRICS)}")
    if metric == "correct":
        return f"CASE WHEN {forensics}.correct THEN 1.0 WHEN NOT {forensics}.correct THEN 0.0 END"
    if metric == "llm":
        # LLM-Acc per question: the verdict averaged over judge models says correct (the llm_acc macro's
        # rule), so a two-judge 1 / 0 split is 1, not the mean 0.5.
        return (f"CASE WHEN says_correct({forensics}.llm) THEN 1.0 "
                f"WHEN NOT says_correct({forensics}.llm) THEN 0.0 END")
    if metric in ("em", "f1"):
        return f"{scores}.{metric}"
    return f"{forensics}.{metric}"


def paired_outcomes_sql(metric: str) -> str:
    """One row per question both runs answered: id, stratum columns, outcome under A and under B."""
    # Both runs' outcomes come from one filtered pass over the forensics view; trajectory_scores
    # (one row per trajectory) is joined only for the metrics that live there.
    scores_join = (
        "\n    JOIN trajectory_scores s ON s.trajectory_id = f.trajectory_id" if metric in ("em", "f1") else ""
    )
    if metric.startswith("rubric:"):
        scores_join = _rubric_join(metric)
    return f"""WITH outcomes AS (
    SELECT f.run_id, f.question_id, f.dataset, f.question_type, f.hop_count, f.read_count, f.end_reason,
           {metric_expression(metric, "f", "s")} AS outcome
    FROM trajectory_forensics f{scores_join}
    WHERE f.run_id IN ($run_a, $run_b)
)
SELECT fa.question_id,
       fa.dataset, fa.question_type, fa.hop_count,
       -- Read-Gate's rescue subset: A's voluntary zero-read finals (a forced or failed end is not one);
       -- NULL when run A has no known read action: "read nothing" says nothing about such a run.
       CASE WHEN ca.read_action THEN is_zero_read_final(fa.end_reason, fa.read_count) END AS a_zero_read,
       fa.read_count AS a_read_count, fb.read_count AS b_read_count,
       fa.outcome AS outcome_a,
       fb.outcome AS outcome_b
FROM outcomes fa
JOIN outcomes fb ON fb.question_id = fa.question_id AND fb.dataset = fa.dataset
-- run A's row only: every run's capabilities aggregate all of its trajectories
LEFT JOIN run_capabilities ca ON ca.run_id = fa.run_id AND ca.run_id = $run_a
WHERE fa.run_id = $run_a AND fb.run_id = $run_b
ORDER BY fa.question_id"""


def run_question_ids_sql() -> str:
    """Question ids of one run (to report what a comparison could not pair)."""
    return "SELECT question_id FROM trajectories WHERE run_id = $run ORDER BY question_id"


def run_question_count_sql() -> str:
    """How many distinct question ids one run has."""
    return "SELECT count(DISTINCT question_id) FROM trajectories WHERE run_id = $run"


def require_run(con: Any, run_id: str) -> None:
    """Raise QueryError naming the run when it has no trajectories."""
    n = con.execute("SELECT count(*) FROM trajectories WHERE run_id = ?", [run_id]).fetchone()[0]
    if not n:
        raise QueryError(f"no trajectories for run {run_id!r} in the warehouse")


__all__ = ["DEFAULT_COMPARE_METRIC", "METRICS", "STRATA", "QueryError", "metric_expression", "paired_outcomes_sql",
           "require_run", "resolve_rubric_metric", "run_question_count_sql", "run_question_ids_sql"]
