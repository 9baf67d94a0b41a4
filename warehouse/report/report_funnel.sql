-- Per chosen run ($runs): evidence-funnel counts over its (trajectory, gold passage) rows (view evidence_funnel): per stage the rows where it applies, those that reached it, and why it does not apply where it does not.
SELECT run_id,
       count(DISTINCT trajectory_id)                                   AS n_trajectories,
       count(*)                                                        AS n_passages,
       count(queried)                                                  AS queried_applies,
       count(*) FILTER (queried)                                       AS queried_reached,
       any_value(stage_reason) FILTER (queried IS NULL)                AS queried_reason,
       count(retrieved)                                                AS retrieved_applies,
       count(*) FILTER (retrieved)                                     AS retrieved_reached,
       any_value(stage_reason) FILTER (retrieved IS NULL)              AS retrieved_reason,
       count(snippet_shown)                                            AS snippet_shown_applies,
       count(*) FILTER (snippet_shown)                                 AS snippet_shown_reached,
       any_value(stage_reason) FILTER (snippet_shown IS NULL)          AS snippet_shown_reason,
       count(read)                                                     AS read_applies,
       count(*) FILTER (read)                                          AS read_reached,
       any_value(stage_reason) FILTER (read IS NULL)                   AS read_reason,
       count(used)                                                     AS used_applies,
       count(*) FILTER (used)                                          AS used_reached,
       any_value(stage_reason) FILTER (used IS NULL)                   AS used_reason
FROM evidence_funnel
WHERE list_contains($runs, run_id)
GROUP BY run_id
