"""Overview page: what the warehouse holds, and the findings that the other pages show in full."""
from __future__ import annotations

from ._plane import plane_arrows_sql


def overview_contents_sql() -> str:
    """One row: how many runs, trajectories, questions and audit records, and which datasets and models."""
    return """SELECT (SELECT count(*) FROM runs)                                  AS n_runs,
       (SELECT count(*) FROM trajectories)                          AS n_trajectories,
       (SELECT count(DISTINCT (dataset, question_id)) FROM trajectories) AS n_questions,
       (SELECT list(DISTINCT dataset ORDER BY dataset) FROM runs)   AS datasets,
       (SELECT list(DISTINCT model ORDER BY model) FILTER (model IS NOT NULL) FROM runs) AS models,
       (SELECT list(DISTINCT controller || '/' || coalesce(condition, 'default')
                    ORDER BY controller || '/' || coalesce(condition, 'default')) FROM runs) AS conditions,
       (SELECT count(*) FROM audit_records)                         AS n_audit_records"""


def overview_gate_rejections_sql() -> str:
    """Per run whose gates rejected finals: how many, in how many trajectories, and the first such trajectory."""
    return """SELECT f.run_id, r.controller, r.condition,
       CAST(sum(f.gate_rejections) AS BIGINT)                    AS rejections,
       count(*)                                                  AS trajectories,
       min(f.trajectory_id)                                      AS first_trajectory
FROM trajectory_facts f
JOIN runs r USING (run_id)
WHERE f.gate_rejections > 0
GROUP BY ALL
ORDER BY rejections DESC, f.run_id"""


def overview_plane_moves_sql(extractor: str = "regex") -> str:
    """Each baseline → intervention arrow of the failure plane, the longest first (a zero-length one last)."""
    return f"""SELECT dataset, from_run, to_run, condition,
       y AS p_disc_from, x AS p_post_from, y2 AS p_disc_to, x2 AS p_post_to,
       abs(x2 - x) + abs(y2 - y) AS moved
FROM ({plane_arrows_sql(extractor, [])})
ORDER BY moved DESC, dataset, from_run, to_run"""


def overview_pairs_sql() -> str:
    """Each baseline run against every other run of its dataset and model: paired questions and discordant pairs."""
    return """WITH pairs AS (
    SELECT b.run_id AS run_a, o.run_id AS run_b, o.controller, o.condition, b.dataset
    FROM runs b
    JOIN runs o ON o.dataset = b.dataset AND o.model IS NOT DISTINCT FROM b.model AND o.run_id <> b.run_id
    WHERE b.condition = 'baseline'
)
SELECT p.run_a, p.run_b, p.controller, p.condition, p.dataset,
       count(*)                                             AS paired,
       count(*) FILTER (a.correct AND NOT b.correct)        AS broken,
       count(*) FILTER (NOT a.correct AND b.correct)        AS fixed
FROM pairs p
JOIN trajectory_correctness a ON a.run_id = p.run_a
JOIN trajectory_correctness b ON b.run_id = p.run_b AND b.question_id = a.question_id AND b.dataset = a.dataset
GROUP BY p.run_a, p.run_b, p.controller, p.condition, p.dataset
ORDER BY (p.controller <> 'read_gate'), p.dataset, p.run_a, p.condition, p.run_b"""
