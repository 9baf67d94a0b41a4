-- One row per fork child paired with its parent: the fork step, the intervention, both verdicts (the papers' correctness criterion) and whether the fork rescued (parent wrong, child right) or broke (parent right, child wrong) the answer; failed forks are kept with fork_failed so nothing is silently dropped.
CREATE OR REPLACE VIEW fork_pairs AS
SELECT k.trajectory_id, k.run_id, k.parent_trajectory_id, k.parent_run_id, t.question_id, k.step_index,
       k.intervention, k.argument, k.rule, coalesce(k.placebo, false) AS placebo,
       k.prefix_model_calls, k.prefix_cache_hits,
       coalesce(starts_with(t.error, 'fork failed'), false) AS fork_failed,
       pc.correct AS parent_correct, cc.correct AS child_correct,
       CASE WHEN NOT coalesce(starts_with(t.error, 'fork failed'), false)
            THEN pc.correct = false AND cc.correct = true END AS rescued,
       CASE WHEN NOT coalesce(starts_with(t.error, 'fork failed'), false)
            THEN pc.correct = true AND cc.correct = false END AS broke,
       t.end_reason AS child_end_reason, t.final_answer AS child_answer, p.final_answer AS parent_answer
FROM trajectory_forks k
JOIN trajectories t USING (trajectory_id)
LEFT JOIN trajectories p ON p.trajectory_id = k.parent_trajectory_id
LEFT JOIN trajectory_correctness cc ON cc.trajectory_id = k.trajectory_id
LEFT JOIN trajectory_correctness pc ON pc.trajectory_id = k.parent_trajectory_id;
COMMENT ON COLUMN fork_pairs.trajectory_id IS 'The child trajectory.';
COMMENT ON COLUMN fork_pairs.run_id IS 'The fork run holding the child.';
COMMENT ON COLUMN fork_pairs.parent_trajectory_id IS 'The parent trajectory the child branched off.';
COMMENT ON COLUMN fork_pairs.parent_run_id IS 'The parent''s run.';
COMMENT ON COLUMN fork_pairs.question_id IS 'Question id: parent and child answer the same question.';
COMMENT ON COLUMN fork_pairs.step_index IS 'The fork step (0-based); steps before it are the parent''s.';
COMMENT ON COLUMN fork_pairs.intervention IS 'The intervention applied at the fork step (docs/forks.md).';
COMMENT ON COLUMN fork_pairs.argument IS 'The intervention''s argument: chunk id, query, register edit or model (NULL: none).';
COMMENT ON COLUMN fork_pairs.rule IS 'How the fork step was chosen: a step number or a rule (final, first_read, ...).';
COMMENT ON COLUMN fork_pairs.placebo IS 'True for the placebo control (a non-gold passage of the gold one''s length).';
COMMENT ON COLUMN fork_pairs.prefix_model_calls IS 'Model calls the replayed prefix made outside the cache (0 by construction).';
COMMENT ON COLUMN fork_pairs.prefix_cache_hits IS 'Model calls of the prefix answered from the response cache.';
COMMENT ON COLUMN fork_pairs.fork_failed IS 'True when the fork could not be made (prefix not cached, replay diverged, intervention did not apply); its error says why.';
COMMENT ON COLUMN fork_pairs.parent_correct IS 'The parent''s verdict by the papers'' criterion (trajectory_correctness.correct; NULL: unjudged).';
COMMENT ON COLUMN fork_pairs.child_correct IS 'The child''s verdict by the same criterion (NULL: unjudged).';
COMMENT ON COLUMN fork_pairs.rescued IS 'Parent wrong and child right (NULL: a failed fork or a missing verdict).';
COMMENT ON COLUMN fork_pairs.broke IS 'Parent right and child wrong (NULL: a failed fork or a missing verdict).';
COMMENT ON COLUMN fork_pairs.child_answer IS 'The child''s final answer.';
COMMENT ON COLUMN fork_pairs.parent_answer IS 'The parent''s final answer.';
