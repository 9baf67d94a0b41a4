-- One row per trajectory with its judgments side by side (newest verdict per judge; llm averaged over judge models).
CREATE OR REPLACE VIEW trajectory_scores AS
-- Judgments are reduced to one row per trajectory before meeting trajectories, so the join is
-- one-to-one rather than fanning every trajectory out over its verdicts.
WITH latest AS (
    SELECT trajectory_id, judge, coalesce(judge_model, '') AS judge_model,
           arg_max(score, created_at) AS score
    FROM judgments
    GROUP BY ALL
),
side_by_side AS (
    SELECT trajectory_id,
           max(score) FILTER (judge = 'em')      AS em,
           max(score) FILTER (judge = 'f1')      AS f1,
           max(score) FILTER (judge = 'contain') AS contain,
           avg(score) FILTER (judge = 'llm')     AS llm
    FROM latest
    GROUP BY trajectory_id
)
SELECT t.trajectory_id, s.em, s.f1, s.contain, s.llm
FROM trajectories t
LEFT JOIN side_by_side s USING (trajectory_id);
