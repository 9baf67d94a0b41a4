-- The runs whose trajectories carry a human first error (the pages' run choice).
SELECT run_id, count(*) AS n_labelled FROM human_first_error GROUP BY run_id ORDER BY run_id
