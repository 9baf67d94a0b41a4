-- Per chosen run ($runs): evidence-funnel counts over its (trajectory, gold passage) rows (view evidence_funnel): per stage the rows where it applies, those that reached it, and why it does not apply where it does not.
SELECT run_id,
       count(*) FILTER (first_of_trajectory)                           AS n_trajectories,  -- one marked row each
       count(*)                                                        AS n_passages,
       count(queried)                                                  AS queried_applies,
       count(*) FILTER (queried)                                       AS queried_reached,
       any_value(queried_reason)                                       AS queried_reason,
       count(retrieved)                                                AS retrieved_applies,
       count(*) FILTER (retrieved)                                     AS retrieved_reached,
       any_value(retrieved_reason)                                     AS retrieved_reason,
       count(snippet_shown)                                            AS snippet_shown_applies,
       count(*) FILTER (snippet_shown)                                 AS snippet_shown_reached,
       any_value(snippet_shown_reason)                                 AS snippet_shown_reason,
       count(read)                                                     AS read_applies,
       count(*) FILTER (read)                                          AS read_reached,
       any_value(read_reason)                                          AS read_reason,
       count(used)                                                     AS used_applies,
       count(*) FILTER (used)                                          AS used_reached,
       any_value(used_reason)                                          AS used_reason
FROM evidence_funnel
WHERE list_contains($runs, run_id)
GROUP BY run_id
