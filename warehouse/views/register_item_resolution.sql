-- One row per (trajectory, requirement-register item): its last status, every chunk cited for it, how many of those are gold passages that reached the agent, and whether it is a false resolution (resolved with no such gold passage).
CREATE OR REPLACE VIEW register_item_resolution AS
-- The rule is the macro's (warehouse/definitions/measures.sql), which the stored trajectory_signals read too.
SELECT * FROM register_item_resolution_rows();
COMMENT ON COLUMN register_item_resolution.trajectory_id IS 'Trajectory id (trajectories.trajectory_id).';
COMMENT ON COLUMN register_item_resolution.run_id IS 'Run id (runs.run_id).';
COMMENT ON COLUMN register_item_resolution.item_id IS 'Register item (one sub-question / requirement, e.g. R1).';
COMMENT ON COLUMN register_item_resolution.sub_question IS 'The item''s latest stated sub-question (NULL: never stated).';
COMMENT ON COLUMN register_item_resolution.status IS 'The item''s last status: pending, active, resolved or retired (NULL: no event set one).';
COMMENT ON COLUMN register_item_resolution.supporting_chunk_ids IS 'Every chunk id cited for the item over all its events, distinct.';
COMMENT ON COLUMN register_item_resolution.n_gold_cited IS 'Cited chunks that are gold passages the agent retrieved, read or was given.';
COMMENT ON COLUMN register_item_resolution.false_resolution IS 'Resolved with no cited gold passage that reached the agent (ExecutionRAG App. E, per item); NULL when the question has no gold passages (trajectory_evidence.evidence_reason).';
