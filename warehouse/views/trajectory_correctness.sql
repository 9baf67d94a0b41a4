-- One row per trajectory: is the answer correct by the papers' criterion (LLM-Acc when an LLM verdict exists, else Contain-Acc)? NULL with correct_reason when there is no verdict (no gold answer, or not judged yet).
CREATE OR REPLACE VIEW trajectory_correctness AS
-- Both papers count a failure as LLM-Acc = 0 (ExecutionRAG App. E; Read-Gate's primary metric);
-- without an LLM verdict Contain-Acc stands in (the rule is the macro answer_correct, defined once
-- in warehouse/definitions/measures.sql). Verdicts of several judge models are averaged by
-- trajectory_scores; a tie (0.5) counts as correct.
-- The signals are stored per trajectory (trajectory_signals); the reason for a missing verdict is
-- this view's own (it also names an answer the log did not capture).
SELECT trajectory_id, run_id, question_id, dataset, contain, llm, correct, correct_by,
       CASE WHEN llm IS NULL AND contain IS NULL THEN
            CASE WHEN NOT has_gold_answer
                 THEN 'no gold answer for this question: correctness does not apply'
                 WHEN nullif(trim(final_answer), '') IS NULL
                      AND coalesce(end_reason, '') <> 'error' AND NOT is_forced_end(end_reason)
                 THEN 'no answer text: not judged (the log did not capture the answer)'
                 ELSE 'not judged yet: run trajscope judge' END END AS correct_reason
FROM trajectory_signals;
COMMENT ON COLUMN trajectory_correctness.trajectory_id IS 'Trajectory id (trajectories.trajectory_id).';
COMMENT ON COLUMN trajectory_correctness.run_id IS 'Run id (runs.run_id).';
COMMENT ON COLUMN trajectory_correctness.question_id IS 'Question id: the pairing key across runs.';
COMMENT ON COLUMN trajectory_correctness.dataset IS 'Dataset key of the trajectory (trajectories.dataset: the question''s or run''s dataset, '''' when neither says).';
COMMENT ON COLUMN trajectory_correctness.contain IS 'Contain-Acc in {0, 1}: the normalised gold (or an alias) occurs in the normalised answer (NULL: not judged).';
COMMENT ON COLUMN trajectory_correctness.llm IS 'LLM-judge verdict in [0, 1], the newest per judge model averaged over models (NULL: no LLM verdict).';
COMMENT ON COLUMN trajectory_correctness.correct IS 'Correct by the papers'' criterion: LLM verdict >= 0.5 when one exists, else Contain-Acc >= 0.5; NULL without a verdict (see correct_reason).';
COMMENT ON COLUMN trajectory_correctness.correct_by IS 'Which verdict decided correct: llm or contain (NULL: unjudged).';
COMMENT ON COLUMN trajectory_correctness.correct_reason IS 'Why correct is NULL: no gold answer for the question, no answer text captured (the log lacks it: not judged), or not judged yet.';
