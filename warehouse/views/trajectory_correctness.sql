-- One row per trajectory: is the answer correct by the papers' criterion (LLM-Acc when an LLM verdict exists, else Contain-Acc)?
CREATE OR REPLACE VIEW trajectory_correctness AS
-- Both papers count a failure as LLM-Acc = 0 (ExecutionRAG App. E; Read-Gate's primary metric);
-- without an LLM verdict Contain-Acc stands in. Verdicts of several judge models are averaged
-- by trajectory_scores; a tie (0.5) counts as correct.
SELECT t.trajectory_id, t.run_id, t.question_id, t.dataset,
       s.contain, s.llm,
       CASE WHEN s.llm IS NOT NULL THEN s.llm >= 0.5
            WHEN s.contain IS NOT NULL THEN s.contain >= 0.5 END AS correct,
       CASE WHEN s.llm IS NOT NULL THEN 'llm'
            WHEN s.contain IS NOT NULL THEN 'contain' END         AS correct_by
FROM trajectories t
LEFT JOIN trajectory_scores s USING (trajectory_id);
