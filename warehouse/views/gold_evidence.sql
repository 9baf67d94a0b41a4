-- One row per (trajectory, gold chunk): was it retrieved, read, injected, or seen only as a snippet, and when first.
CREATE OR REPLACE VIEW gold_evidence AS
SELECT t.trajectory_id, t.run_id, t.question_id, t.dataset, g.chunk_id,
       g.first_retrieved_step IS NOT NULL                 AS retrieved,
       g.first_read_step IS NOT NULL                      AS read,
       g.first_injected_step IS NOT NULL                  AS injected,
       g.first_retrieved_step IS NOT NULL AND g.first_read_step IS NULL
           AND g.first_injected_step IS NULL              AS snippet_only,
       g.first_retrieved_step, g.best_rank, g.first_read_step, g.first_injected_step
FROM gold_evidence_facts g
JOIN trajectories t USING (trajectory_id);
COMMENT ON COLUMN gold_evidence.trajectory_id IS 'Trajectory id (trajectories.trajectory_id).';
COMMENT ON COLUMN gold_evidence.run_id IS 'Run id (runs.run_id).';
COMMENT ON COLUMN gold_evidence.question_id IS 'Question id: the pairing key across runs.';
COMMENT ON COLUMN gold_evidence.dataset IS 'Dataset key of the trajectory (trajectories.dataset: the question''s or run''s dataset, '''' when neither says).';
COMMENT ON COLUMN gold_evidence.chunk_id IS 'Gold supporting chunk of the question.';
COMMENT ON COLUMN gold_evidence.retrieved IS 'It appeared among search candidates.';
COMMENT ON COLUMN gold_evidence.read IS 'A read step opened it.';
COMMENT ON COLUMN gold_evidence.injected IS 'A context_injection step placed it in the prompt.';
COMMENT ON COLUMN gold_evidence.snippet_only IS 'Retrieved as a candidate but never read or injected: the agent saw at most its snippet.';
COMMENT ON COLUMN gold_evidence.first_retrieved_step IS 'First search step that listed it (NULL: never retrieved).';
COMMENT ON COLUMN gold_evidence.best_rank IS 'Best (lowest) candidate rank it reached, from 1 (NULL: never retrieved).';
COMMENT ON COLUMN gold_evidence.first_read_step IS 'First read step that opened it (NULL: never read).';
COMMENT ON COLUMN gold_evidence.first_injected_step IS 'First context_injection step that placed it (NULL: never injected).';
