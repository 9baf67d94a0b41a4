-- Verdicts the records carry (origin 'record', or 'import' for the scores the importer computed; `trajscope judge` adds origin 'judge'), as a view over stage: 17 inserts them, and they stand in for the stored judgments while the batch's facts are refreshed.
CREATE OR REPLACE TEMP VIEW stage_judgment_rows AS
SELECT trajectory_id, j.judge AS judge, j.score AS score, j.judge_model AS judge_model,
       j.rationale AS rationale, CASE WHEN scored_at_import(j.rationale) THEN 'import' ELSE 'record' END AS origin
FROM (SELECT trajectory_id, unnest(judgments) AS j FROM stage WHERE len(judgments) > 0)
