-- Per trajectory of $run with TRAIL annotated error spans: each distinct (step, category) pair people labelled, with the trajectory's step count.
SELECT h.trajectory_id, h.step_index, h.category, any_value(t.n_steps) AS n_steps
FROM human_step_labels h JOIN trajectories t USING (trajectory_id)
WHERE t.run_id = $run AND h.label = 'error' AND h.source = 'trail' AND h.step_index IS NOT NULL
GROUP BY h.trajectory_id, h.step_index, h.category
ORDER BY h.trajectory_id, h.step_index, h.category NULLS FIRST
