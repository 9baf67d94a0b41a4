-- Two raters' ($rater_a, $rater_b) verdicts per trajectory over $runs (NULL: every run): their agreement's input.
WITH verdicts AS (
    SELECT trajectory_id,
           CASE WHEN judge = 'llm' THEN 'llm:' || coalesce(judge_model, '') ELSE judge END AS rater,
           arg_max(score, created_at) AS score
    FROM judgments
    GROUP BY ALL
)
SELECT x.trajectory_id, says_correct(x.score) AS a_says_right, says_correct(y.score) AS b_says_right
FROM verdicts x
JOIN verdicts y ON y.trajectory_id = x.trajectory_id AND y.rater = $rater_b
JOIN trajectories t ON t.trajectory_id = x.trajectory_id
WHERE x.rater = $rater_a AND ($runs IS NULL OR list_contains($runs, t.run_id))
ORDER BY x.trajectory_id
