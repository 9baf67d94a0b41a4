-- Whose signals a loaded batch recomputes: its new and changed trajectories, and stored ones asking a question the batch restated (their type, hops and gold answer are signals).
SELECT trajectory_id FROM incoming_changed
UNION
SELECT t.trajectory_id FROM trajectories t JOIN stage_question_changes c USING (dataset, question_id)
