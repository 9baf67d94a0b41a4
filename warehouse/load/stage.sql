-- Stage one batch file of canonical lines (new or changed trajectories only), with the dataset key its question is stored under; {columns} and {max_object_bytes} are filled from the format (types, line-size limit).
CREATE OR REPLACE TEMP TABLE stage AS
SELECT *,
       -- --per-run-questions keys every question by its run too, so runs never share a question row
       CASE WHEN NOT $per_run_questions THEN coalesce(question.dataset, run.dataset, '')
            WHEN coalesce(question.dataset, run.dataset, '') = '' THEN 'run:' || run.run_id
            ELSE coalesce(question.dataset, run.dataset) || '/run:' || run.run_id END AS key_dataset
FROM read_json($path, format = 'newline_delimited', columns = {columns},
               maximum_object_size = {max_object_bytes})
-- $all_changed (every line of the batch is new or changed, as on a first ingest) skips the semi-join,
-- a third of the statement's time
WHERE $all_changed OR trajectory_id IN (SELECT trajectory_id FROM incoming_changed)
