-- Per chosen run ($runs), hop count and ExecutionRAG failure label (Appendix E priority order, failure_erag): wrong trajectories.
SELECT run_id, coalesce(hop_count, -1) AS hop_count, label, count(*) AS n
FROM failure_erag
WHERE list_contains($runs, run_id)
GROUP BY ALL
ORDER BY run_id, hop_count, label
