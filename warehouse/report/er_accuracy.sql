-- Per chosen run ($runs): trajectories, Contain-Acc and LLM-Acc with their judged counts, retrieved tokens and cost per question (run_efficiency).
SELECT e.run_id, e.n,
       count(f.contain) AS n_contain, sum(f.contain) AS contain_sum,
       count(f.llm) AS n_llm, sum(f.llm) AS llm_sum,
       e.retrieved_tokens, e.cost_per_question, e.accuracy
FROM run_efficiency e
JOIN trajectory_forensics f USING (run_id)
WHERE list_contains($runs, e.run_id)
GROUP BY ALL
