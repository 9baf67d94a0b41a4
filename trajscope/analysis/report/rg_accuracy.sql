-- Per chosen run ($runs): judged trajectories, accuracy by the papers' rule (LLM-Acc, else Contain-Acc) and the voluntary zero-read rate.
SELECT run_id,
       count(correct)                                                       AS n_judged,
       count(*)                                                             AS n,
       avg(CAST(correct AS DOUBLE))        AS accuracy,
       sum(CAST(correct AS DOUBLE))        AS n_correct,
       -- NULL for a run without a read action, as run_summary.zero_read_final_rate.
       CASE WHEN any_value(c.read_action)
            THEN avg(CAST(is_zero_read_final(end_reason, read_count) AS DOUBLE)) END AS zero_read_final_rate
FROM trajectory_forensics
LEFT JOIN run_capabilities c USING (run_id)
WHERE list_contains($runs, run_id)
GROUP BY run_id
