-- One row per trajectory: is the answer correct by the papers' criterion (LLM-Acc when an LLM verdict exists, else Contain-Acc)? NULL with correct_reason when there is no verdict (no gold answer, or not judged yet).
CREATE OR REPLACE VIEW trajectory_correctness AS
-- Both papers count a failure as LLM-Acc = 0 (ExecutionRAG App. E; Read-Gate's primary metric);
-- without an LLM verdict Contain-Acc stands in (the rule is the macro answer_correct, defined once
-- in warehouse/definitions/measures.sql). Verdicts of several judge models are averaged by
-- trajectory_scores; a tie (0.5) counts as correct.
SELECT t.trajectory_id, t.run_id, t.question_id, t.dataset,
       s.contain, s.llm,
       answer_correct(s.llm, s.contain)    AS correct,
       answer_correct_by(s.llm, s.contain) AS correct_by,
       CASE WHEN s.llm IS NULL AND s.contain IS NULL THEN
            CASE WHEN NOT has_gold_answer(q.gold_answer, q.aliases)
                 THEN 'no gold answer for this question: correctness does not apply'
                 ELSE 'not judged yet: run trajscope judge' END END AS correct_reason
FROM trajectories t
LEFT JOIN trajectory_scores s USING (trajectory_id)
LEFT JOIN questions q ON q.dataset = t.dataset AND q.question_id = t.question_id;
