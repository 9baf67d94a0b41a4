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
