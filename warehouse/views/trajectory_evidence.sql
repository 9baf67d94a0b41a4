-- One row per trajectory: how many gold chunks it has, retrieved, read and saw only as snippets; evidence recall (NULL, with evidence_reason, for a question without gold passages).
CREATE OR REPLACE VIEW trajectory_evidence AS
-- The counts are summed from gold_evidence_facts (the gold_evidence view) once, at load time.
-- An unmatched supporting paragraph was never retrieved (ER App. E; the forensic view uses the same rule).
SELECT t.trajectory_id, t.run_id, t.question_id, t.dataset,
       t.n_gold, t.n_gold_retrieved, t.n_gold_read, t.n_gold_snippet_only,
       CASE WHEN t.n_gold > 0 THEN t.n_gold_retrieved = t.n_gold
                                   AND coalesce(q.gold_paragraphs, t.n_gold) <= t.n_gold END AS all_gold_retrieved,
       CASE WHEN t.n_gold > 0 THEN t.n_gold_read > 0 END                       AS any_gold_read,
       CASE WHEN t.n_gold > 0 THEN t.n_gold_retrieved / t.n_gold END           AS evidence_recall,
       CASE WHEN t.n_gold = 0 THEN 'no gold passages for this question: gold-evidence measures do not apply' END
                                                                               AS evidence_reason
FROM trajectories t
LEFT JOIN questions q ON q.dataset = t.dataset AND q.question_id = t.question_id;
COMMENT ON COLUMN trajectory_evidence.trajectory_id IS 'Trajectory id (trajectories.trajectory_id).';
COMMENT ON COLUMN trajectory_evidence.run_id IS 'Run id (runs.run_id).';
COMMENT ON COLUMN trajectory_evidence.question_id IS 'Question id: the pairing key across runs.';
COMMENT ON COLUMN trajectory_evidence.dataset IS 'Dataset key of the trajectory (trajectories.dataset: the question''s or run''s dataset, '''' when neither says).';
COMMENT ON COLUMN trajectory_evidence.n_gold IS 'Gold supporting passages of the question matched to chunks (0: none, and gold measures are NULL).';
COMMENT ON COLUMN trajectory_evidence.n_gold_retrieved IS 'Gold passages that appeared among search candidates.';
COMMENT ON COLUMN trajectory_evidence.n_gold_read IS 'Gold passages opened by a read step.';
COMMENT ON COLUMN trajectory_evidence.n_gold_snippet_only IS 'Gold passages retrieved as candidates but never read or injected.';
COMMENT ON COLUMN trajectory_evidence.all_gold_retrieved IS 'Every supporting paragraph was retrieved: each matched gold chunk appeared among search candidates and none the source names is unmatched (ER App. E); NULL without gold passages (see evidence_reason).';
COMMENT ON COLUMN trajectory_evidence.any_gold_read IS 'A read step opened at least one gold passage; NULL without gold passages (see evidence_reason).';
COMMENT ON COLUMN trajectory_evidence.evidence_recall IS 'Gold passages retrieved as search candidates / gold passages, in [0, 1]; NULL without gold passages (see evidence_reason).';
COMMENT ON COLUMN trajectory_evidence.evidence_reason IS 'Why the gold-evidence measures are NULL: the question has no gold passages.';
