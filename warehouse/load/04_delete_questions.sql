-- The batch's questions replace the stored rows of the same key (only rows no other run uses differ).
DELETE FROM questions WHERE (dataset, question_id) IN (SELECT (dataset, question_id) FROM stage_questions)
