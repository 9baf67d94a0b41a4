-- Per chosen run ($runs): trajectories, retrieved tokens and API cost per question (run_efficiency); accuracy sums come from er_category.
SELECT run_id, n, retrieved_tokens, cost_per_question
FROM run_efficiency
WHERE list_contains($runs, run_id)
