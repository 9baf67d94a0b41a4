-- The batch's fork children: parent, step and intervention of each trajectory that has a fork record.
INSERT INTO trajectory_forks BY NAME
SELECT trajectory_id, run.run_id AS run_id, fork.parent_trajectory_id AS parent_trajectory_id,
       fork.parent_run_id AS parent_run_id, fork.step_index AS step_index, fork.intervention AS intervention,
       fork.argument AS argument, fork.rule AS rule, fork.placebo AS placebo,
       fork.prefix_model_calls AS prefix_model_calls, fork.prefix_cache_hits AS prefix_cache_hits,
       fork.prefix_log_replays AS prefix_log_replays
FROM stage WHERE fork IS NOT NULL
