-- Newest LLM-judge verdict per (trajectory, judge model) of the chosen runs ($runs), as right or wrong (says_correct).
SELECT j.trajectory_id, coalesce(j.judge_model, '') AS judge_model,
       says_correct(arg_max(j.score, j.created_at)) AS says_right
FROM judgments j
JOIN trajectories t ON t.trajectory_id = j.trajectory_id
WHERE j.judge = 'llm' AND list_contains($runs, t.run_id) AND j.score IS NOT NULL
GROUP BY ALL
ORDER BY j.trajectory_id, judge_model
