-- One row per trajectory: is the answer correct by the papers' criterion (LLM-Acc when an LLM verdict exists, else Contain-Acc)?
CREATE OR REPLACE VIEW trajectory_correctness AS
-- Both papers count a failure as LLM-Acc = 0 (ExecutionRAG App. E; Read-Gate's primary metric);
-- without an LLM verdict Contain-Acc stands in (the rule is the macro answer_correct, defined once
-- in warehouse/definitions/measures.sql). Verdicts of several judge models are averaged by
-- trajectory_scores; a tie (0.5) counts as correct.
SELECT t.trajectory_id, t.run_id, t.question_id, t.dataset,
       s.contain, s.llm,
       answer_correct(s.llm, s.contain)    AS correct,
       answer_correct_by(s.llm, s.contain) AS correct_by
FROM trajectories t
LEFT JOIN trajectory_scores s USING (trajectory_id);
