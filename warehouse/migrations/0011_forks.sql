-- Counterfactual forks (trajscope fork): one row per child trajectory naming its parent, the step and the intervention.
CREATE TABLE IF NOT EXISTS trajectory_forks (
    trajectory_id         VARCHAR NOT NULL,
    run_id                VARCHAR NOT NULL,
    parent_trajectory_id  VARCHAR NOT NULL,
    parent_run_id         VARCHAR NOT NULL,
    step_index            INTEGER NOT NULL,
    intervention          VARCHAR NOT NULL,
    argument              VARCHAR,
    rule                  VARCHAR,
    placebo               BOOLEAN,
    prefix_model_calls    INTEGER,
    prefix_cache_hits     INTEGER
);
ALTER TABLE runs ADD COLUMN IF NOT EXISTS forked_from VARCHAR;
COMMENT ON TABLE trajectory_forks IS 'Counterfactual forks: each child trajectory, its parent, the fork step and the intervention applied there.';
COMMENT ON COLUMN trajectory_forks.trajectory_id IS 'The child trajectory (trajectories.trajectory_id).';
COMMENT ON COLUMN trajectory_forks.run_id IS 'The fork run holding the child.';
COMMENT ON COLUMN trajectory_forks.parent_trajectory_id IS 'The trajectory the child branched off.';
COMMENT ON COLUMN trajectory_forks.parent_run_id IS 'The run of the parent trajectory.';
COMMENT ON COLUMN trajectory_forks.step_index IS 'The fork step (0-based): steps before it are the parent''s, replayed from the response cache.';
COMMENT ON COLUMN trajectory_forks.intervention IS 'What changed at the fork step: inject_gold, placebo, force_read, replace_query, remove_decoy, inject_candidate, reject_final, fix_register or swap_model (docs/forks.md).';
COMMENT ON COLUMN trajectory_forks.argument IS 'The intervention''s argument: chunk id, query, register edit or model (NULL: none).';
COMMENT ON COLUMN trajectory_forks.rule IS 'How the fork step was chosen: a step number or a rule (final, first_read, ...).';
COMMENT ON COLUMN trajectory_forks.placebo IS 'True for a control intervention (a non-gold passage of the gold one''s length).';
COMMENT ON COLUMN trajectory_forks.prefix_model_calls IS 'Model calls the replayed prefix made that the cache did not answer (0 by construction: a miss fails the fork).';
COMMENT ON COLUMN trajectory_forks.prefix_cache_hits IS 'Model calls of the prefix answered from the response cache.';
COMMENT ON COLUMN runs.forked_from IS 'For a fork run: the run its trajectories branched off (NULL: not a fork run).';
