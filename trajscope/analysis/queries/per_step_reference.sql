-- Per trajectory of $run with per-step human labels (not Who&When's decisive step or TRAIL's spans): its labelled steps in order, its step count, trajscope's verdict and people's verdict on the answer (metadata.human_answer_correct, NULL: none).
WITH labels AS (
    SELECT h.trajectory_id, h.step_index, first(h.label ORDER BY h.origin, h.ordinal) AS label
    FROM human_step_labels h JOIN trajectories t USING (trajectory_id)
    WHERE t.run_id = $run AND h.step_index IS NOT NULL AND coalesce(h.source, '') NOT IN ('who_and_when', 'mistake_step', 'trail')
    GROUP BY h.trajectory_id, h.step_index
)
SELECT l.trajectory_id, any_value(t.n_steps) AS n_steps, list(l.step_index ORDER BY l.step_index) AS steps,
       list(l.label ORDER BY l.step_index) AS labels, any_value(c.correct) AS correct,
       any_value(TRY_CAST(json_extract_string(t.metadata, '$.human_answer_correct') AS BOOLEAN)) AS human_correct
FROM labels l JOIN trajectories t USING (trajectory_id) LEFT JOIN trajectory_correctness c USING (trajectory_id)
GROUP BY l.trajectory_id
ORDER BY l.trajectory_id
