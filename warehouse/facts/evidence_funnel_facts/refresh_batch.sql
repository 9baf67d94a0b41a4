-- Whose evidence funnel facts a loaded batch recomputes: its new and changed trajectories, and stored ones asking a question the batch restated (stage_question_changes).
SELECT trajectory_id FROM incoming_changed
UNION
SELECT t.trajectory_id
FROM trajectories t
JOIN stage_question_changes c ON c.dataset = t.dataset AND c.question_id = t.question_id
