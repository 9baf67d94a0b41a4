-- ExecutionRAG taxonomy: one row per wrong trajectory, labelled judge_error > gave_up > reasoning_error > missing_evidence (no_gold_evidence when the question has no gold passages).
CREATE OR REPLACE VIEW failure_erag AS
-- The label rules live in trajectory_erag_label (Appendix E); this view keeps the failures.
SELECT trajectory_id, run_id, question_id, dataset, question_type, hop_count,
       label, reasoning_subtype,
       abstained, end_reason, false_resolution, n_false_resolved, register_complete,
       n_gold, n_gold_reached, hop_evidence_recall, contain, llm, correct_by, answer_checked
FROM trajectory_erag_label
WHERE correct = false;
COMMENT ON COLUMN failure_erag.trajectory_id IS 'Trajectory id; only wrong trajectories (correct = false) have a row.';
COMMENT ON COLUMN failure_erag.run_id IS 'Run id (runs.run_id).';
COMMENT ON COLUMN failure_erag.question_id IS 'Question id: the pairing key across runs.';
COMMENT ON COLUMN failure_erag.dataset IS 'Dataset key of the trajectory (trajectories.dataset: the question''s or run''s dataset, '''' when neither says).';
COMMENT ON COLUMN failure_erag.question_type IS 'Question type from the dataset (NULL: the source gives none).';
COMMENT ON COLUMN failure_erag.hop_count IS 'Reasoning hops the dataset assigns the question (NULL: the source gives none).';
COMMENT ON COLUMN failure_erag.label IS 'ExecutionRAG failure label (App. E): error > judge_error (LLM says wrong, Contain-Acc right) > gave_up (abstained, or forced at the context budget or for an unrecorded cause; not at the loop cap) > reasoning_error > missing_evidence; no_gold_evidence without gold passages.';
COMMENT ON COLUMN failure_erag.reasoning_subtype IS 'For reasoning_error: all_gold_retrieved (every gold passage reached) or false_resolution; NULL for every other label.';
COMMENT ON COLUMN failure_erag.abstained IS 'The final answer is an abstention; NULL: not checked yet (answer_checked), and then it counts as not abstained.';
COMMENT ON COLUMN failure_erag.false_resolution IS 'At least one register item falsely resolved (ExecutionRAG App. E); NULL without gold passages (n_gold = 0) or without a register.';
COMMENT ON COLUMN failure_erag.n_false_resolved IS 'Register items falsely resolved: last status resolved, citing no gold passage that reached the agent (0 without gold passages; NULL: no register item).';
COMMENT ON COLUMN failure_erag.register_complete IS 'Every register item ended resolved or retired and at least one resolved (false without a register).';
COMMENT ON COLUMN failure_erag.n_gold IS 'Gold supporting passages of the question matched to chunks (0: none, and gold measures are NULL).';
COMMENT ON COLUMN failure_erag.n_gold_reached IS 'Gold passages that reached the agent at all: retrieved, read or injected.';
COMMENT ON COLUMN failure_erag.hop_evidence_recall IS 'ExecutionRAG hop-level evidence recall: gold passages reached / supporting paragraphs the source names (else n_gold), capped at 1; NULL when the question has neither (trajectory_forensics.evidence_reason).';
COMMENT ON COLUMN failure_erag.contain IS 'Contain-Acc in {0, 1}: the normalised gold (or an alias) occurs in the normalised answer (NULL: not judged).';
COMMENT ON COLUMN failure_erag.llm IS 'LLM-judge verdict in [0, 1], the newest per judge model averaged over models (NULL: no LLM verdict).';
COMMENT ON COLUMN failure_erag.correct_by IS 'Which verdict made it wrong: llm or contain.';
COMMENT ON COLUMN failure_erag.answer_checked IS 'trajscope judge has checked the answer of this trajectory version (abstention, answer in snippets / reads).';
