-- Verdicts the records carry (origin 'record', or 'import' for the scores the importer computed; `trajscope judge` adds origin 'judge').
INSERT INTO judgments BY NAME
SELECT trajectory_id, j.judge AS judge, j.score AS score, j.judge_model AS judge_model,
       j.rationale AS rationale, CASE WHEN scored_at_import(j.rationale) THEN 'import' ELSE 'record' END AS origin
FROM (SELECT trajectory_id, unnest(judgments) AS j FROM stage WHERE len(judgments) > 0)
