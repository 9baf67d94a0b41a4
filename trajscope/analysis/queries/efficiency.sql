-- run_efficiency for $runs (NULL: every run): the efficiency frontier's points.
SELECT * FROM run_efficiency WHERE $runs IS NULL OR list_contains($runs, run_id) ORDER BY run_id
