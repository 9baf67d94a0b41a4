-- The methods that label or attribute a step of $run's per-step-labelled trajectories, each with its kind (map: a stored label map per trajectory; first_error: one step named as the first error, none named meaning no error), and for rules the reason a trajectory is left undecided.
SELECT DISTINCT m.method, 'map' AS kind FROM method_step_labels m JOIN trajectories t USING (trajectory_id)
WHERE t.run_id = $run
UNION
SELECT 'rules', 'first_error'
UNION
SELECT DISTINCT a.method, 'first_error' FROM step_attributions a JOIN trajectories t USING (trajectory_id)
WHERE t.run_id = $run AND a.step_index IS NOT NULL AND NOT starts_with(a.method, 'baseline:')
  AND a.method NOT IN (SELECT DISTINCT method FROM method_step_labels)
ORDER BY 1
