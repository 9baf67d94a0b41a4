-- Whose signals a question upsert recomputes: the trajectories asking a question it added or changed (upserted_keys); a chunk is no signal.
SELECT t.trajectory_id FROM trajectories t JOIN upserted_keys k USING (dataset, question_id)
