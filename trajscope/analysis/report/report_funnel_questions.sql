-- Per trajectory of the chosen runs ($runs): whether every gold passage of its question reached each funnel stage (view evidence_funnel_question, scope all; NULL: the stage does not apply to the log), the unit two conditions are paired on.
SELECT run_id, question_id, dataset, queried, retrieved, snippet_shown, read, used
FROM evidence_funnel_question
WHERE scope = 'all' AND list_contains($runs, run_id)
