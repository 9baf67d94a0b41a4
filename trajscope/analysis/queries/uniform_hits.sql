-- What a uniformly drawn step / agent hits per labelled trajectory: the Poisson-binomial behind the baseline.
SELECT g.trajectory_id, g.step_index, g.n_steps, g.agent,
       (SELECT len(list(DISTINCT lower(s.agent))) FROM steps s
        WHERE s.trajectory_id = g.trajectory_id AND s.agent IS NOT NULL) AS n_agents,
       (SELECT bool_or(lower(s.agent) = lower(g.agent)) FROM steps s WHERE s.trajectory_id = g.trajectory_id)
           AS agent_spoke
FROM human_first_error g WHERE g.run_id = $run ORDER BY g.trajectory_id
