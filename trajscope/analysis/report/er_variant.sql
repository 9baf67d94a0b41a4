-- Per chosen run ($runs): the ExecutionRAG variants its trajectories ran (trajectories.metadata.variant, written by the controller; 'unrecorded' where a log does not say).
SELECT run_id, list(DISTINCT coalesce(metadata ->> 'variant', 'unrecorded') ORDER BY 1) AS variants
FROM trajectories
WHERE list_contains($runs, run_id)
GROUP BY run_id
ORDER BY run_id
