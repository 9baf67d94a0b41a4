-- Whose judgment score facts a loaded batch recomputes: its new and changed trajectories (their judgments were replaced).
SELECT trajectory_id FROM incoming_changed
