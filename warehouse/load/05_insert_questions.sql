-- The batch's questions with their golds.
INSERT INTO questions BY NAME
SELECT *
FROM stage_questions
