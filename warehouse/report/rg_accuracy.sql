-- Per chosen run ($runs): judged trajectories, accuracy by the papers' rule (LLM-Acc, else Contain-Acc) and the voluntary zero-read rate.
SELECT run_id,
       count(correct)                                                       AS n_judged,
       count(*)                                                             AS n,
       avg(CAST(correct AS DOUBLE))        AS accuracy,
       sum(CAST(correct AS DOUBLE))        AS n_correct,
       avg(CAST(end_reason = 'final' AND read_count = 0 AS DOUBLE)) AS zero_read_rate
FROM trajectory_forensics
WHERE list_contains($runs, run_id)
GROUP BY run_id
