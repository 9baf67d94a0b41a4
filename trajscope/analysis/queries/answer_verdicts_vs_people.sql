-- Per trajectory of $run with a human verdict on its final answer (metadata.human_answer_correct, read from a record's final_label at import) and per judge: the judge's verdict (says_correct of its newest score), with trajscope's decided correctness as judge 'trajscope'.
WITH people AS (
    SELECT trajectory_id, TRY_CAST(json_extract_string(metadata, '$.human_answer_correct') AS BOOLEAN) AS human_correct
    FROM trajectories
    WHERE run_id = $run AND TRY_CAST(json_extract_string(metadata, '$.human_answer_correct') AS BOOLEAN) IS NOT NULL
),
judged AS (
    SELECT j.trajectory_id, j.judge || coalesce(':' || j.judge_model, '') AS judge,
           says_correct(arg_max(j.score, j.created_at)) AS says_correct
    FROM judgments j JOIN people p USING (trajectory_id)
    WHERE j.score IS NOT NULL
    GROUP BY j.trajectory_id, j.judge, j.judge_model
)
SELECT 'trajscope' AS judge, p.trajectory_id, p.human_correct, c.correct AS says_correct
FROM people p LEFT JOIN trajectory_correctness c USING (trajectory_id)
UNION ALL
SELECT j.judge, p.trajectory_id, p.human_correct, j.says_correct
FROM people p JOIN judged j USING (trajectory_id)
ORDER BY 1, 2
