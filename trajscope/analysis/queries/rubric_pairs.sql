-- Labelled rubric verdicts (rubric_label_pairs) of run $run and rubric $rubric (NULL: all): the scanner agreement's input.
SELECT rubric_hash, model, trajectory_id, model_match, human_match FROM rubric_label_pairs
WHERE ($run IS NULL OR run_id = $run) AND ($rubric IS NULL OR rubric_hash = $rubric)
ORDER BY rubric_hash, model, trajectory_id
