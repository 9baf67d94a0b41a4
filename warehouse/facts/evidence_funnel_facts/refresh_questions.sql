-- Whose evidence funnel facts a question upsert recomputes: the trajectories asking a question it added or changed (upserted_keys).
SELECT t.trajectory_id
FROM trajectories t
JOIN upserted_keys k ON k.dataset = t.dataset AND k.question_id = t.question_id
