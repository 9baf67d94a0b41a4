-- Read-Gate Table 4 (the one definition; compare --table4, the Compare page and report rg_t4 run it):
-- post-gold-read failure by arm over every judged trajectory of the arms' runs (A: $runs_a, B: $runs_b), by
-- read exposure (distinct passages read: 0, 1, 2, 3, 4+). The marginal OR pools all rows; the
-- Mantel-Haenszel OR pools the strata with a read (0 reads cannot be a post-gold-read failure).
-- passages_read is a load-time column of trajectories, read through trajectory_facts.
-- The arms' filter is written on every side, so no view computes labels for runs outside them.
WITH arms AS (
    SELECT trajectory_id, run_id, passages_read FROM trajectory_facts
    WHERE list_contains($runs_a, run_id) OR list_contains($runs_b, run_id)
)
SELECT least(f.passages_read, 4) AS read_exposure,
       list_contains($runs_b, f.run_id) AS is_b,
       count(*) FILTER (r.label = 'post_gold_read') AS post_failures,
       count(*) FILTER (r.label IS DISTINCT FROM 'post_gold_read') AS others
FROM arms f
JOIN trajectory_correctness c ON c.trajectory_id = f.trajectory_id AND c.correct IS NOT NULL
     AND (list_contains($runs_a, c.run_id) OR list_contains($runs_b, c.run_id))
LEFT JOIN (SELECT trajectory_id, label FROM failure_rg
           WHERE extractor = $extractor AND (list_contains($runs_a, run_id) OR list_contains($runs_b, run_id))) r
       ON r.trajectory_id = f.trajectory_id
GROUP BY ALL
ORDER BY read_exposure, is_b DESC
