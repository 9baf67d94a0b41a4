-- One row per judged trajectory: its newest verdict per judge side by side (llm averaged over judge models); 0 under every judge for an answer that echoes a controller message or names every option (answer_checks).
CREATE OR REPLACE VIEW judgment_scores AS
-- Every taxonomy query recomputes this, so the common case takes one pass: a judge whose verdicts
-- all come from one model (in the whole table, hence in every trajectory) needs only its newest
-- verdict per trajectory. Only judges with several models take the newest per model first.
WITH multi_model AS (
    SELECT judge FROM judgments
    GROUP BY judge HAVING count(DISTINCT coalesce(judge_model, '')) > 1
),
one_model AS (
    SELECT trajectory_id,
           arg_max(score, created_at) FILTER (judge = 'em')      AS em,
           arg_max(score, created_at) FILTER (judge = 'f1')      AS f1,
           arg_max(score, created_at) FILTER (judge = 'contain') AS contain,
           arg_max(score, created_at) FILTER (judge = 'llm')     AS llm
    FROM judgments
    WHERE judge NOT IN (SELECT judge FROM multi_model)
    GROUP BY trajectory_id
),
latest_per_model AS (
    SELECT trajectory_id, judge, coalesce(judge_model, '') AS judge_model,
           arg_max(score, created_at) AS score
    FROM judgments
    WHERE judge IN (SELECT judge FROM multi_model)
    GROUP BY ALL
),
many_models AS (
    SELECT trajectory_id,
           max(score) FILTER (judge = 'em')      AS em,
           max(score) FILTER (judge = 'f1')      AS f1,
           max(score) FILTER (judge = 'contain') AS contain,
           avg(score) FILTER (judge = 'llm')     AS llm
    FROM latest_per_model
    GROUP BY trajectory_id
),
-- An answer echoing the controller's own message, or naming every option of a comparison question,
-- is right under no judge (trajscope.format.answer_invalidity, checked by trajscope judge): a source's
-- verdict or one written before the check existed is overruled here, for the current record only.
invalid AS (
    SELECT a.trajectory_id
    FROM answer_checks a
    JOIN trajectories t ON t.trajectory_id = a.trajectory_id AND t.record_hash = a.record_hash
    WHERE coalesce(a.echoed, false) OR coalesce(a.hedged, false)
),
scores AS (
    -- A judge's verdicts sit on exactly one side, so coalesce picks that side.
    SELECT coalesce(o.trajectory_id, m.trajectory_id) AS trajectory_id,
           coalesce(o.em, m.em)           AS em,
           coalesce(o.f1, m.f1)           AS f1,
           coalesce(o.contain, m.contain) AS contain,
           coalesce(o.llm, m.llm)         AS llm
    FROM one_model o
    FULL JOIN many_models m ON m.trajectory_id = o.trajectory_id
)
SELECT s.trajectory_id,
       CASE WHEN i.trajectory_id IS NULL THEN s.em      ELSE least(s.em, 0.0)      END AS em,
       CASE WHEN i.trajectory_id IS NULL THEN s.f1      ELSE least(s.f1, 0.0)      END AS f1,
       CASE WHEN i.trajectory_id IS NULL THEN s.contain ELSE least(s.contain, 0.0) END AS contain,
       CASE WHEN i.trajectory_id IS NULL THEN s.llm     ELSE least(s.llm, 0.0)     END AS llm
FROM scores s
LEFT JOIN invalid i USING (trajectory_id);
COMMENT ON COLUMN judgment_scores.trajectory_id IS 'Trajectory id; only judged trajectories have a row.';
COMMENT ON COLUMN judgment_scores.em IS 'Newest exact-match verdict in {0, 1}; 0 for an echo or hedge (answer_checks.echoed / hedged); NULL: no em verdict.';
COMMENT ON COLUMN judgment_scores.f1 IS 'Newest token-F1 verdict in [0, 1]; 0 for an echo or hedge; NULL: no f1 verdict.';
COMMENT ON COLUMN judgment_scores.contain IS 'Newest Contain-Acc verdict in {0, 1}; 0 for an echo or hedge; NULL: no contain verdict.';
COMMENT ON COLUMN judgment_scores.llm IS 'LLM-judge verdict in [0, 1]: the newest per judge model, averaged over models; 0 for an echo or hedge; NULL: no LLM verdict.';
