-- One row per trajectory: its ExecutionRAG failure label and reasoning sub-type (NULL unless the trajectory is wrong; an error trajectory is labelled error), with the signals behind them.
CREATE OR REPLACE VIEW trajectory_erag_label AS
-- Appendix E: failures are LLM-Acc = 0 (Contain-Acc = 0 when no LLM verdict exists); a forced,
-- budget-exhausted answer counts as gave up (App. B); "retrieved" means the gold passage reached the
-- agent at all (search result, read, or injection); a false resolution is a register item resolved
-- without its gold evidence (register_item_resolution), so missing evidence stays reachable for
-- ExecutionRAG runs whose resolved items each cite a gold passage while another is never retrieved.
-- Kept for every trajectory so that the per-hop breakdown counts labels and accuracy in one pass
-- over trajectory_forensics.
SELECT trajectory_id, run_id, question_id, dataset, question_type, hop_count, correct,
       CASE WHEN correct IS DISTINCT FROM false THEN NULL
            WHEN end_reason = 'error' THEN 'error'
            WHEN llm IS NOT NULL AND says_correct(contain) THEN 'judge_error'
            WHEN coalesce(abstained, false) OR end_reason IN ('budget', 'forced_answer') THEN 'gave_up'
            WHEN all_gold_reached OR false_resolution THEN 'reasoning_error'
            WHEN n_gold > 0 THEN 'missing_evidence'
            ELSE 'no_gold_evidence' END                                AS label,
       CASE WHEN correct IS DISTINCT FROM false THEN NULL
            WHEN end_reason = 'error' THEN NULL
            WHEN llm IS NOT NULL AND says_correct(contain) THEN NULL
            WHEN coalesce(abstained, false) OR end_reason IN ('budget', 'forced_answer') THEN NULL
            WHEN all_gold_reached THEN 'all_gold_retrieved'
            WHEN false_resolution THEN 'false_resolution' END         AS reasoning_subtype,
       abstained, end_reason, false_resolution, n_false_resolved, register_complete,
       n_gold, n_gold_reached, hop_evidence_recall, contain, llm, correct_by, answer_checked
FROM trajectory_forensics;
