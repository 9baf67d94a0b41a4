-- Per chosen run ($runs) and read exposure (distinct passages read, 0-4+): judged trajectories with and without a post-gold-read failure (regex extractor).
SELECT t.run_id, least(t.passages_read, 4) AS read_exposure,
       count(*) FILTER (r.label = 'post_gold_read')                AS post_failures,
       count(*) FILTER (r.label IS DISTINCT FROM 'post_gold_read') AS others
FROM trajectories t
JOIN trajectory_correctness c ON c.trajectory_id = t.trajectory_id AND c.correct IS NOT NULL
LEFT JOIN failure_rg r ON r.trajectory_id = t.trajectory_id AND r.extractor = 'regex'
WHERE list_contains($runs, t.run_id)
GROUP BY ALL
ORDER BY t.run_id, read_exposure
