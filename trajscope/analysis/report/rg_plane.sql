-- Figure 7's points: P_disc and P_post (shares of the run's judged trajectories, as the failure_plane view defines them) per chosen run ($runs) under one entity extractor ($extractor), with the reason where one does not apply.
SELECT run_id, n_trajectories, n_judged, p_disc, p_post, p_disc_reason, p_post_reason
FROM failure_plane
WHERE list_contains($runs, run_id) AND extractor = $extractor
