-- ExecutionRAG taxonomy: one row per wrong trajectory, labelled judge_error > gave_up > reasoning_error > missing_evidence (no_gold_evidence when the question has no gold passages).
CREATE OR REPLACE VIEW failure_erag AS
-- The label rules live in trajectory_erag_label (Appendix E); this view keeps the failures.
SELECT trajectory_id, run_id, question_id, dataset, question_type, hop_count,
       label, reasoning_subtype,
       abstained, end_reason, false_resolution, n_false_resolved, register_complete,
       n_gold, n_gold_reached, hop_evidence_recall, contain, llm, correct_by, answer_checked
FROM trajectory_erag_label
WHERE correct = false;
