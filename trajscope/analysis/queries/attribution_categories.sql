-- (method, the people's category, the method's category) on the labelled trajectories of run $run where both name one: kappa's input.
SELECT a.method, g.category AS human, a.category AS method_category
FROM human_first_error g JOIN step_attributions a USING (trajectory_id)
WHERE g.run_id = $run AND g.category IS NOT NULL AND a.category IS NOT NULL
