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
