-- Each trajectory's verdicts side by side (the newest per judge; llm averaged over judge models; 0 for an echoed or hedged answer), recomputed for the trajectories listed in the temp table score_refresh (a loaded batch, those a judge pass wrote, or all).
DELETE FROM judgment_score_facts WHERE trajectory_id IN (SELECT trajectory_id FROM score_refresh);
INSERT INTO judgment_score_facts BY NAME
-- A trajectory's scores depend on its own verdicts only. Most take one pass: a judge whose verdicts
-- (among these trajectories) all come from one model needs only its newest verdict per trajectory;
-- only judges with several models take the newest per model first (the two agree on a trajectory
-- with one model, so where the split falls does not change any row).
WITH scoped AS (
    SELECT * FROM judgments WHERE trajectory_id IN (SELECT trajectory_id FROM score_refresh)
),
multi_model AS (
    SELECT judge FROM scoped
    GROUP BY judge HAVING count(DISTINCT coalesce(judge_model, '')) > 1
),
one_model AS (
    SELECT trajectory_id,
           arg_max(score, created_at) FILTER (judge = 'em')      AS em,
           arg_max(score, created_at) FILTER (judge = 'f1')      AS f1,
           arg_max(score, created_at) FILTER (judge = 'contain') AS contain,
           arg_max(score, created_at) FILTER (judge = 'llm')     AS llm
    FROM scoped
    WHERE judge NOT IN (SELECT judge FROM multi_model)
    GROUP BY trajectory_id
),
latest_per_model AS (
    SELECT trajectory_id, judge, coalesce(judge_model, '') AS judge_model,
           arg_max(score, created_at) AS score
    FROM scoped
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
    WHERE a.trajectory_id IN (SELECT trajectory_id FROM score_refresh)
      AND (coalesce(a.echoed, false) OR coalesce(a.hedged, false))
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
LEFT JOIN invalid i USING (trajectory_id)
