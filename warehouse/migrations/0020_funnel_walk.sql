-- The stored parts of the Evidence funnel page's summaries: one marked row per trajectory and per (trajectory, hop) in the funnel facts, and per trajectory its funnel summed and the capability-free first-decisive-error walk (warehouse/load/trajectory_funnel_facts.sql); filled by the recompute that follows a migration.
ALTER TABLE evidence_funnel_facts ADD COLUMN IF NOT EXISTS first_of_trajectory BOOLEAN;
ALTER TABLE evidence_funnel_facts ADD COLUMN IF NOT EXISTS first_of_hop BOOLEAN;
COMMENT ON COLUMN evidence_funnel_facts.first_of_trajectory IS 'True on one row of each trajectory (its lowest hop, then chunk id): counting these counts trajectories.';
COMMENT ON COLUMN evidence_funnel_facts.first_of_hop IS 'True on one row of each (trajectory, hop): counting these counts trajectories per hop.';
CREATE TABLE IF NOT EXISTS trajectory_funnel_facts (
    trajectory_id     VARCHAR NOT NULL,
    run_id            VARCHAR,
    question_id       VARCHAR,
    dataset           VARCHAR,
    question_type     VARCHAR,
    n_steps           INTEGER,
    funnel_hops       BIGINT,
    funnel_queried    BIGINT,
    funnel_retrieved  BIGINT,
    funnel_shown      BIGINT,
    funnel_read       BIGINT,
    funnel_used       BIGINT,
    funnel_final_step INTEGER,
    first_unread      STRUCT(hop BIGINT, chunk_id VARCHAR, queried BOOLEAN, queried_step INTEGER, retrieved_step INTEGER, shown_step INTEGER),
    answered_hop      STRUCT(hop BIGINT, chunk_id VARCHAR, entity VARCHAR)
);
COMMENT ON TABLE trajectory_funnel_facts IS 'Per trajectory: its evidence funnel summed per stage and the first-decisive-error walk, the parts that need no run capability, computed at load after evidence_funnel_facts and after question or chunk upserts.';
COMMENT ON COLUMN trajectory_funnel_facts.trajectory_id IS 'Trajectory id (trajectories.trajectory_id).';
COMMENT ON COLUMN trajectory_funnel_facts.run_id IS 'Run id (runs.run_id).';
COMMENT ON COLUMN trajectory_funnel_facts.question_id IS 'Question id: the pairing key across runs.';
COMMENT ON COLUMN trajectory_funnel_facts.dataset IS 'Dataset key of the trajectory (trajectories.dataset).';
COMMENT ON COLUMN trajectory_funnel_facts.question_type IS 'Question type from the dataset (NULL: the source gives none).';
COMMENT ON COLUMN trajectory_funnel_facts.n_steps IS 'Steps of the trajectory (trajectories.n_steps).';
COMMENT ON COLUMN trajectory_funnel_facts.funnel_hops IS 'Gold passages in its evidence funnel (evidence_funnel_facts rows; NULL: none).';
COMMENT ON COLUMN trajectory_funnel_facts.funnel_queried IS 'Of its funnel''s gold passages, how many a search query named (evidence_funnel_facts.queried).';
COMMENT ON COLUMN trajectory_funnel_facts.funnel_retrieved IS 'Of its funnel''s gold passages, how many were listed among search candidates (retrieved_step set).';
COMMENT ON COLUMN trajectory_funnel_facts.funnel_shown IS 'Of its funnel''s gold passages, how many were listed within the shown top-k (snippet_shown_step set).';
COMMENT ON COLUMN trajectory_funnel_facts.funnel_read IS 'Of its funnel''s gold passages, how many were read or injected (read_step set).';
COMMENT ON COLUMN trajectory_funnel_facts.funnel_used IS 'Of its funnel''s gold passages, how many were used (evidence_funnel_facts.used).';
COMMENT ON COLUMN trajectory_funnel_facts.funnel_final_step IS 'Its last final or forced_answer step, as the funnel facts hold it (NULL: no funnel rows, or no final).';
COMMENT ON COLUMN trajectory_funnel_facts.first_unread IS 'The first hop (in hop order) whose gold passage never entered the context, with the steps the first-decisive-error rules name (NULL: every hop was read, or none exists).';
COMMENT ON COLUMN trajectory_funnel_facts.answered_hop IS 'The first hop whose title, bridge entity or yield the final answer names while no gold answer or alias does (first_decisive_error''s bridge confusion; NULL: none).';
