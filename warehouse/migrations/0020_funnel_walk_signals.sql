-- The stored parts of the Evidence funnel page's two summaries: one marked row per trajectory and per (trajectory, hop) in the funnel facts; per trajectory in its signals, the capability-free first-decisive-error walk and how many gold passages reached each funnel stage; filled by the recompute that follows a migration.
ALTER TABLE evidence_funnel_facts ADD COLUMN IF NOT EXISTS first_of_trajectory BOOLEAN;
ALTER TABLE evidence_funnel_facts ADD COLUMN IF NOT EXISTS first_of_hop BOOLEAN;
COMMENT ON COLUMN evidence_funnel_facts.first_of_trajectory IS 'True on one row of each trajectory (its lowest hop, then chunk id): counting these counts trajectories.';
COMMENT ON COLUMN evidence_funnel_facts.first_of_hop IS 'True on one row of each (trajectory, hop): counting these counts trajectories per hop.';
ALTER TABLE trajectory_signals ADD COLUMN IF NOT EXISTS n_steps INTEGER;
ALTER TABLE trajectory_signals ADD COLUMN IF NOT EXISTS funnel_hops BIGINT;
ALTER TABLE trajectory_signals ADD COLUMN IF NOT EXISTS funnel_queried BIGINT;
ALTER TABLE trajectory_signals ADD COLUMN IF NOT EXISTS funnel_retrieved BIGINT;
ALTER TABLE trajectory_signals ADD COLUMN IF NOT EXISTS funnel_shown BIGINT;
ALTER TABLE trajectory_signals ADD COLUMN IF NOT EXISTS funnel_read BIGINT;
ALTER TABLE trajectory_signals ADD COLUMN IF NOT EXISTS funnel_used BIGINT;
ALTER TABLE trajectory_signals ADD COLUMN IF NOT EXISTS funnel_final_step INTEGER;
ALTER TABLE trajectory_signals ADD COLUMN IF NOT EXISTS first_unread
    STRUCT(hop BIGINT, chunk_id VARCHAR, queried BOOLEAN, queried_step INTEGER, retrieved_step INTEGER, shown_step INTEGER);
ALTER TABLE trajectory_signals ADD COLUMN IF NOT EXISTS answered_hop STRUCT(hop BIGINT, chunk_id VARCHAR, entity VARCHAR);
COMMENT ON COLUMN trajectory_signals.n_steps IS 'Steps of the trajectory (trajectories.n_steps).';
COMMENT ON COLUMN trajectory_signals.funnel_hops IS 'Gold passages in its evidence funnel (evidence_funnel_facts rows; NULL: none).';
COMMENT ON COLUMN trajectory_signals.funnel_queried IS 'Of its funnel''s gold passages, how many a search query named (evidence_funnel_facts.queried).';
COMMENT ON COLUMN trajectory_signals.funnel_retrieved IS 'Of its funnel''s gold passages, how many were listed among search candidates (retrieved_step set).';
COMMENT ON COLUMN trajectory_signals.funnel_shown IS 'Of its funnel''s gold passages, how many were listed within the shown top-k (snippet_shown_step set).';
COMMENT ON COLUMN trajectory_signals.funnel_read IS 'Of its funnel''s gold passages, how many were read or injected (read_step set).';
COMMENT ON COLUMN trajectory_signals.funnel_used IS 'Of its funnel''s gold passages, how many were used (evidence_funnel_facts.used).';
COMMENT ON COLUMN trajectory_signals.funnel_final_step IS 'Its last final or forced_answer step, as the funnel facts hold it (NULL: no funnel rows, or no final).';
COMMENT ON COLUMN trajectory_signals.first_unread IS 'The first hop (in hop order) whose gold passage never entered the context, with the steps the first-decisive-error rules name (NULL: every hop was read, or none exists).';
COMMENT ON COLUMN trajectory_signals.answered_hop IS 'The first hop whose title, bridge entity or yield the final answer names while no gold answer or alias does (first_decisive_error''s bridge confusion; NULL: none).';
