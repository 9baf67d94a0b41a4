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
            WHEN coalesce(abstained, false) OR is_gave_up_end(end_reason) THEN 'gave_up'
            WHEN all_gold_reached OR false_resolution THEN 'reasoning_error'
            WHEN n_gold > 0 THEN 'missing_evidence'
            ELSE 'no_gold_evidence' END                                AS label,
       CASE WHEN correct IS DISTINCT FROM false THEN NULL
            WHEN end_reason = 'error' THEN NULL
            WHEN llm IS NOT NULL AND says_correct(contain) THEN NULL
            WHEN coalesce(abstained, false) OR is_gave_up_end(end_reason) THEN NULL
            WHEN all_gold_reached THEN 'all_gold_retrieved'
            WHEN false_resolution THEN 'false_resolution' END         AS reasoning_subtype,
       abstained, end_reason, false_resolution, n_false_resolved, register_complete,
       n_gold, n_gold_reached, hop_evidence_recall, contain, llm, correct_by, answer_checked
FROM trajectory_forensics;
COMMENT ON COLUMN trajectory_erag_label.trajectory_id IS 'Trajectory id (trajectories.trajectory_id).';
COMMENT ON COLUMN trajectory_erag_label.run_id IS 'Run id (runs.run_id).';
COMMENT ON COLUMN trajectory_erag_label.question_id IS 'Question id: the pairing key across runs.';
COMMENT ON COLUMN trajectory_erag_label.dataset IS 'Dataset key of the trajectory (trajectories.dataset: the question''s or run''s dataset, '''' when neither says).';
COMMENT ON COLUMN trajectory_erag_label.question_type IS 'Question type from the dataset (NULL: the source gives none).';
COMMENT ON COLUMN trajectory_erag_label.hop_count IS 'Reasoning hops the dataset assigns the question (NULL: the source gives none).';
COMMENT ON COLUMN trajectory_erag_label.correct IS 'Correct by the papers'' criterion: LLM verdict >= 0.5 when one exists, else Contain-Acc >= 0.5; NULL without a verdict (trajectory_correctness.correct_reason says why).';
COMMENT ON COLUMN trajectory_erag_label.label IS 'ExecutionRAG failure label (App. E) of a wrong trajectory: error > judge_error > gave_up > reasoning_error > missing_evidence, no_gold_evidence without gold passages; NULL when correct or unjudged (see correct).';
COMMENT ON COLUMN trajectory_erag_label.reasoning_subtype IS 'For reasoning_error: all_gold_retrieved (every gold passage reached) or false_resolution; NULL for every other label.';
COMMENT ON COLUMN trajectory_erag_label.abstained IS 'The final answer is an abstention; NULL: not checked yet (answer_checked), and then it counts as not abstained.';
COMMENT ON COLUMN trajectory_erag_label.false_resolution IS 'At least one register item falsely resolved (ExecutionRAG App. E); NULL without gold passages (n_gold = 0) or without a register.';
COMMENT ON COLUMN trajectory_erag_label.n_false_resolved IS 'Register items falsely resolved: last status resolved, citing no gold passage that reached the agent (0 without gold passages; NULL: no register item).';
COMMENT ON COLUMN trajectory_erag_label.register_complete IS 'Every register item ended resolved or retired and at least one resolved (false without a register).';
COMMENT ON COLUMN trajectory_erag_label.n_gold IS 'Gold supporting passages of the question matched to chunks (0: none, and gold measures are NULL).';
COMMENT ON COLUMN trajectory_erag_label.n_gold_reached IS 'Gold passages that reached the agent at all: retrieved, read or injected.';
COMMENT ON COLUMN trajectory_erag_label.hop_evidence_recall IS 'ExecutionRAG hop-level evidence recall: gold passages reached / supporting paragraphs the source names (else n_gold), capped at 1; NULL when the question has neither (trajectory_forensics.evidence_reason).';
COMMENT ON COLUMN trajectory_erag_label.contain IS 'Contain-Acc in {0, 1}: the normalised gold (or an alias) occurs in the normalised answer (NULL: not judged).';
COMMENT ON COLUMN trajectory_erag_label.llm IS 'LLM-judge verdict in [0, 1], the newest per judge model averaged over models (NULL: no LLM verdict).';
COMMENT ON COLUMN trajectory_erag_label.correct_by IS 'Which verdict decided correct: llm or contain (NULL: unjudged).';
COMMENT ON COLUMN trajectory_erag_label.answer_checked IS 'trajscope judge has checked the answer of this trajectory version (abstention, answer in snippets / reads).';
