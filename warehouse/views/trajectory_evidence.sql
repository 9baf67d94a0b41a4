-- One row per trajectory: how many gold chunks it has, retrieved, read and saw only as snippets; evidence recall (NULL, with evidence_reason, for a question without gold passages).
CREATE OR REPLACE VIEW trajectory_evidence AS
-- The counts are summed from gold_evidence_facts (the gold_evidence view) once, at load time.
SELECT trajectory_id, run_id, question_id, dataset,
       n_gold, n_gold_retrieved, n_gold_read, n_gold_snippet_only,
       CASE WHEN n_gold > 0 THEN n_gold_retrieved = n_gold END             AS all_gold_retrieved,
       CASE WHEN n_gold > 0 THEN n_gold_read > 0 END                       AS any_gold_read,
       CASE WHEN n_gold > 0 THEN n_gold_retrieved / n_gold END             AS evidence_recall,
       CASE WHEN n_gold = 0 THEN 'no gold passages for this question: gold-evidence measures do not apply' END
                                                                           AS evidence_reason
FROM trajectories;
COMMENT ON COLUMN trajectory_evidence.trajectory_id IS 'Trajectory id (trajectories.trajectory_id).';
COMMENT ON COLUMN trajectory_evidence.run_id IS 'Run id (runs.run_id).';
COMMENT ON COLUMN trajectory_evidence.question_id IS 'Question id: the pairing key across runs.';
COMMENT ON COLUMN trajectory_evidence.dataset IS 'Dataset key of the trajectory (trajectories.dataset: the question''s or run''s dataset, '''' when neither says).';
COMMENT ON COLUMN trajectory_evidence.n_gold IS 'Gold supporting passages of the question matched to chunks (0: none, and gold measures are NULL).';
COMMENT ON COLUMN trajectory_evidence.n_gold_retrieved IS 'Gold passages that appeared among search candidates.';
COMMENT ON COLUMN trajectory_evidence.n_gold_read IS 'Gold passages opened by a read step.';
COMMENT ON COLUMN trajectory_evidence.n_gold_snippet_only IS 'Gold passages retrieved as candidates but never read or injected.';
COMMENT ON COLUMN trajectory_evidence.all_gold_retrieved IS 'Every gold passage appeared among search candidates; NULL without gold passages (see evidence_reason).';
COMMENT ON COLUMN trajectory_evidence.any_gold_read IS 'A read step opened at least one gold passage; NULL without gold passages (see evidence_reason).';
COMMENT ON COLUMN trajectory_evidence.evidence_recall IS 'Gold passages retrieved as search candidates / gold passages, in [0, 1]; NULL without gold passages (see evidence_reason).';
COMMENT ON COLUMN trajectory_evidence.evidence_reason IS 'Why the gold-evidence measures are NULL: the question has no gold passages.';
