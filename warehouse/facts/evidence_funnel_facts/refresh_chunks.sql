-- Whose evidence funnel facts a corpus upsert recomputes: the trajectories with a gold passage it added or changed (upserted_keys; titles and texts name hops).
SELECT DISTINCT g.trajectory_id
FROM gold_evidence_facts g
JOIN trajectories t USING (trajectory_id)
JOIN upserted_keys k ON k.dataset = t.dataset AND k.chunk_id = g.chunk_id
