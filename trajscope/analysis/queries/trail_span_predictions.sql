-- Per method and TRAIL-labelled trajectory of $run: each (step, category) the method names as an error (an imported label file's every error, a model's or the rules' one attributed step); step NULL: the method covers the trajectory but names no error there.
WITH reference AS (
    SELECT DISTINCT h.trajectory_id FROM human_step_labels h JOIN trajectories t USING (trajectory_id)
    WHERE t.run_id = $run AND h.label = 'error' AND h.source = 'trail' AND h.step_index IS NOT NULL
)
SELECT DISTINCT m.method, m.trajectory_id, CASE WHEN m.label = 'error' THEN m.step_index END AS step_index,
       CASE WHEN m.label = 'error' THEN m.category END AS category
FROM method_step_labels m JOIN reference r USING (trajectory_id)
UNION
SELECT a.method, a.trajectory_id, a.step_index, a.category
FROM step_attributions a JOIN reference r USING (trajectory_id)
WHERE NOT starts_with(a.method, 'baseline:') AND a.method NOT IN (SELECT DISTINCT method FROM method_step_labels)
ORDER BY 1, 2, 3 NULLS FIRST, 4 NULLS FIRST
