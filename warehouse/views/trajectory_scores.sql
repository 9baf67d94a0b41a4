-- One row per trajectory with its judgments side by side (newest verdict per judge; llm averaged over judge models).
CREATE OR REPLACE VIEW trajectory_scores AS
WITH latest AS (
    SELECT trajectory_id, judge, coalesce(judge_model, '') AS judge_model,
           arg_max(score, created_at) AS score
    FROM judgments
    GROUP BY ALL
)
SELECT t.trajectory_id,
       max(score) FILTER (judge = 'em')      AS em,
       max(score) FILTER (judge = 'f1')      AS f1,
       max(score) FILTER (judge = 'contain') AS contain,
       avg(score) FILTER (judge = 'llm')     AS llm
FROM trajectories t
LEFT JOIN latest l USING (trajectory_id)
GROUP BY t.trajectory_id;
