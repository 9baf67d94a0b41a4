-- One row per trajectory: how many gold chunks it has, retrieved, read and saw only as snippets; evidence recall.
CREATE OR REPLACE VIEW trajectory_evidence AS
-- The counts are summed from gold_evidence_facts (the gold_evidence view) once, at load time.
SELECT trajectory_id, run_id, question_id, dataset,
       n_gold, n_gold_retrieved, n_gold_read, n_gold_snippet_only,
       n_gold > 0 AND n_gold_retrieved = n_gold                            AS all_gold_retrieved,
       n_gold_read > 0                                                     AS any_gold_read,
       CASE WHEN n_gold > 0 THEN n_gold_retrieved / n_gold END             AS evidence_recall
FROM trajectories;
