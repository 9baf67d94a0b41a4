-- Per chosen run ($runs): the context-budget rules and limits its trajectories ran under (trajectories.metadata, written by the engine's controllers; 'unrecorded' / 'none' where a log does not say).
SELECT run_id,
       list(DISTINCT coalesce(metadata ->> 'context_budget_rule', 'unrecorded') ORDER BY 1) AS rules,
       list(DISTINCT coalesce(metadata ->> 'context_token_budget', 'none') ORDER BY 1)       AS budgets
FROM trajectories
WHERE list_contains($runs, run_id)
GROUP BY run_id
ORDER BY run_id
