-- Read-Gate Table 18 (the one definition; `agreement --robustness` and report rg_t18 run it): judge B
-- re-judges a stratified sample of each run's trajectories (strata: judge A's verdict). Per run and stratum:
-- the population judged by A, and the sample both judged with B's verdicts (a NULL score is no verdict).
WITH verdicts AS (
    SELECT trajectory_id,
           CASE WHEN judge = 'llm' THEN 'llm:' || coalesce(judge_model, '') ELSE judge END AS rater,
           arg_max(score, created_at) AS score
    FROM judgments
    GROUP BY ALL
),
a AS (SELECT trajectory_id, says_correct(score) AS a_right FROM verdicts WHERE rater = $rater_a AND score IS NOT NULL),
b AS (SELECT trajectory_id, says_correct(score) AS b_right FROM verdicts WHERE rater = $rater_b AND score IS NOT NULL)
SELECT t.run_id, a.a_right AS stratum,
       count(*)                                    AS n_population,
       count(b.b_right)                            AS n_sample,
       count(*) FILTER (b.b_right)                 AS n_sample_b_right
FROM trajectories t
JOIN a USING (trajectory_id)
LEFT JOIN b USING (trajectory_id)
WHERE $runs IS NULL OR list_contains($runs, t.run_id)
GROUP BY ALL
ORDER BY t.run_id, stratum
