-- One row per (trajectory, gold passage), in hop order: was it queried for, retrieved (best rank), shown in the top-k, read, used, and the step where each first happened; a stage the log cannot show is NULL with stage_reason.
CREATE OR REPLACE VIEW evidence_funnel AS
-- Every stage that needs no capability is stored per (trajectory, gold passage) at load
-- (evidence_funnel_facts, warehouse/load/evidence_funnel_facts.sql: hop order, query matching, ranks,
-- reads, uses); only what depends on the run's capabilities, inferred from all its stored
-- trajectories, is decided here: retrieved / snippet_shown / read are false, not NULL, only where the
-- log could have shown them.
SELECT f.trajectory_id, f.run_id, f.question_id, f.dataset, f.question_type, f.chunk_id, f.title, f.hop, f.n_hops,
       f.hop_order, f.bridge_entity, f.answer_entities, f.queried, f.queried_step,
       CASE WHEN f.retrieved_step IS NOT NULL THEN true
            WHEN rc.search_candidates THEN false END                          AS retrieved,
       f.retrieved_step, f.best_rank,
       CASE WHEN f.snippet_shown_step IS NOT NULL THEN true
            WHEN rc.search_candidates THEN false END                          AS snippet_shown,
       f.snippet_shown_step,
       CASE WHEN f.read_step IS NOT NULL THEN true
            WHEN rc.read_action THEN false END                                AS read,
       f.read_step, f.read_via, f.used, f.used_step, f.used_via, f.final_step,
       concat_ws('; ',
           CASE WHEN rc.search_candidates IS NOT true
                THEN 'retrieved, snippet_shown do not apply: ' || rc.search_candidates_reason END,
           CASE WHEN rc.read_action IS NOT true AND f.read_step IS NULL
                THEN 'read does not apply: ' || rc.read_action_reason END)    AS stage_reason
FROM evidence_funnel_facts f
LEFT JOIN run_capabilities rc ON rc.run_id = f.run_id;
COMMENT ON COLUMN evidence_funnel.trajectory_id IS 'Trajectory id (trajectories.trajectory_id).';
COMMENT ON COLUMN evidence_funnel.run_id IS 'Run id (runs.run_id).';
COMMENT ON COLUMN evidence_funnel.question_id IS 'Question id: the pairing key across runs.';
COMMENT ON COLUMN evidence_funnel.dataset IS 'Dataset key of the trajectory (trajectories.dataset).';
COMMENT ON COLUMN evidence_funnel.question_type IS 'Question type from the dataset (NULL: the source gives none).';
COMMENT ON COLUMN evidence_funnel.chunk_id IS 'The gold passage (a chunk of the question''s gold_chunk_ids).';
COMMENT ON COLUMN evidence_funnel.title IS 'The gold passage''s title (NULL: the corpus is not loaded or the chunk has none).';
COMMENT ON COLUMN evidence_funnel.hop IS 'Hop position from 1: the dataset''s reasoning order, else order of first appearance in the trajectory (hop_order says which).';
COMMENT ON COLUMN evidence_funnel.n_hops IS 'Gold passages of the question (matched chunks).';
COMMENT ON COLUMN evidence_funnel.hop_order IS 'Where hop comes from: decomposition (MuSiQue), evidence (2Wiki triples), supporting_facts (HotpotQA), chain (the writer''s gold chain), or first_appearance (no order stated).';
COMMENT ON COLUMN evidence_funnel.bridge_entity IS 'The entity a query names this hop by besides its title (2Wiki triple subject, MuSiQue previous answer; NULL: the dataset names none).';
COMMENT ON COLUMN evidence_funnel.answer_entities IS 'What the hop yields: the dataset''s hop answers, else the gold answer and aliases for the last hop of a stated order (or, without an order, a passage whose text names the gold answer); [] otherwise.';
COMMENT ON COLUMN evidence_funnel.queried IS 'A search query names the passage''s title or its bridge entity (names_entity).';
COMMENT ON COLUMN evidence_funnel.queried_step IS 'First search step whose query names it (NULL: never).';
COMMENT ON COLUMN evidence_funnel.retrieved IS 'It was listed among search candidates; NULL when the log has no candidate chunk ids (stage_reason).';
COMMENT ON COLUMN evidence_funnel.retrieved_step IS 'First search step that listed it (NULL: never).';
COMMENT ON COLUMN evidence_funnel.best_rank IS 'Best (lowest) candidate rank it reached, from 1 (NULL: never retrieved).';
COMMENT ON COLUMN evidence_funnel.snippet_shown IS 'It was listed within the run''s shown top-k (runs.top_k; every listed candidate when none is recorded), so its snippet was before the agent; NULL without candidate chunk ids.';
COMMENT ON COLUMN evidence_funnel.snippet_shown_step IS 'First search step that listed it within the top-k (NULL: never).';
COMMENT ON COLUMN evidence_funnel.read IS 'Its full text entered the context: a read step, or a context injection; NULL when the log has no read action and it was not injected (stage_reason).';
COMMENT ON COLUMN evidence_funnel.read_step IS 'First step that read or injected it (NULL: never).';
COMMENT ON COLUMN evidence_funnel.read_via IS 'How it first entered the context: read or context_injection (NULL: never).';
COMMENT ON COLUMN evidence_funnel.used IS 'The agent used it: a register item was resolved citing it, a later query names what it yields (answer_entities), or the final answer names what it yields.';
COMMENT ON COLUMN evidence_funnel.used_step IS 'First step of that use (a register event''s step, the later query, or the final step; NULL: not used, or the register event has no step).';
COMMENT ON COLUMN evidence_funnel.used_via IS 'The first use: register, next_query or final (NULL: not used).';
COMMENT ON COLUMN evidence_funnel.final_step IS 'The trajectory''s last final or forced_answer step (NULL: it has none).';
COMMENT ON COLUMN evidence_funnel.stage_reason IS 'Which stages do not apply to this log and why (the run_capabilities reason); NULL when every stage applies.';
