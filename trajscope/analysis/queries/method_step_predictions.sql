-- Per method and trajectory of $run with per-step human labels: the steps the method labelled and how (a stored label map), or the one step it names as the first error (rules, model protocols, stored attributions).
WITH reference AS (
    SELECT DISTINCT h.trajectory_id FROM human_step_labels h JOIN trajectories t USING (trajectory_id)
    WHERE t.run_id = $run AND h.step_index IS NOT NULL AND coalesce(h.source, '') NOT IN ('who_and_when', 'mistake_step', 'trail')
),
mapped AS (
    SELECT m.method, m.trajectory_id, m.step_index, first(m.label ORDER BY m.ordinal) AS label
    FROM method_step_labels m JOIN reference r USING (trajectory_id)
    WHERE m.step_index IS NOT NULL
    GROUP BY m.method, m.trajectory_id, m.step_index
)
SELECT method, trajectory_id, 'map' AS kind, list(step_index ORDER BY step_index) AS steps,
       list(label ORDER BY step_index) AS labels
FROM mapped GROUP BY method, trajectory_id
UNION ALL
SELECT a.method, a.trajectory_id, 'first_error', [min(a.step_index)], ['error']
FROM step_attributions a JOIN reference r USING (trajectory_id)
WHERE a.step_index IS NOT NULL AND NOT starts_with(a.method, 'baseline:')
  AND a.method NOT IN (SELECT DISTINCT method FROM method_step_labels)
GROUP BY a.method, a.trajectory_id
ORDER BY 1, 2
