-- One row per trajectory: how many gold chunks it has, retrieved, read and saw only as snippets; evidence recall.
CREATE OR REPLACE VIEW trajectory_evidence AS
SELECT t.trajectory_id, t.run_id, t.question_id, t.dataset,
       count(g.chunk_id)                               AS n_gold,
       count(g.chunk_id) FILTER (g.retrieved)          AS n_gold_retrieved,
       count(g.chunk_id) FILTER (g.read)               AS n_gold_read,
       count(g.chunk_id) FILTER (g.snippet_only)       AS n_gold_snippet_only,
       count(g.chunk_id) > 0 AND count(g.chunk_id) FILTER (g.retrieved) = count(g.chunk_id) AS all_gold_retrieved,
       count(g.chunk_id) FILTER (g.read) > 0           AS any_gold_read,
       CASE WHEN count(g.chunk_id) > 0
            THEN count(g.chunk_id) FILTER (g.retrieved) / count(g.chunk_id) END AS evidence_recall
FROM trajectories t
LEFT JOIN gold_evidence g USING (trajectory_id)
GROUP BY ALL;
