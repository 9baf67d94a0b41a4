-- Per chosen run ($runs): trajectories and Read-Gate discipline failures by the regex extractor (failure_plane), for the baseline discipline error.
SELECT run_id, n_trajectories, n_disc, p_disc, read_action
FROM failure_plane
WHERE extractor = 'regex' AND list_contains($runs, run_id)
