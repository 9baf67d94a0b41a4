-- Per method and labelled trajectory: did the method name the people's first error (unattributed: a miss)?
SELECT m.method, g.trajectory_id, coalesce(bool_or(a.step_index = g.step_index), false) AS hit
FROM human_first_error g
CROSS JOIN (SELECT DISTINCT a.method FROM step_attributions a JOIN human_first_error h USING (trajectory_id)
            WHERE h.run_id = $run AND a.step_index IS NOT NULL) m
LEFT JOIN step_attributions a ON a.trajectory_id = g.trajectory_id AND a.method = m.method
WHERE g.run_id = $run
GROUP BY m.method, g.trajectory_id
ORDER BY m.method, g.trajectory_id
