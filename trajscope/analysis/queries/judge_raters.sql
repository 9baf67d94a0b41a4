-- The raters (llm:<model>, contain) with verdicts over $runs (NULL: every run).
SELECT DISTINCT CASE WHEN judge = 'llm' THEN 'llm:' || coalesce(judge_model, '') ELSE judge END AS rater
FROM judgments j JOIN trajectories t USING (trajectory_id)
WHERE judge IN ('llm', 'contain') AND ($runs IS NULL OR list_contains($runs, t.run_id))
ORDER BY rater
