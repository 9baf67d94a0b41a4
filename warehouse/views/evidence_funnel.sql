-- One row per (trajectory, gold passage), in hop order: was it queried for, retrieved (best rank), shown in the top-k, read, used, and the step where each first happened; a stage the log cannot show is NULL with its <stage>_reason.
CREATE OR REPLACE VIEW evidence_funnel AS
-- Every stage that needs no capability is stored per (trajectory, gold passage) at load
-- (evidence_funnel_facts, warehouse/facts/evidence_funnel_facts/fill.sql: hop order, query matching, ranks,
-- reads, uses); only what depends on the run's capabilities, inferred from all its stored
-- trajectories, is decided here: retrieved / snippet_shown / read are false, not NULL, only where the
-- log could have shown them, and each NULL stage carries the capability's reason in its own column.
WITH staged AS (
    SELECT f.*, rc.search_candidates, rc.search_candidates_reason, rc.read_action, rc.read_action_reason
    FROM evidence_funnel_facts f
    LEFT JOIN run_capabilities rc ON rc.run_id = f.run_id
), stages AS (
    SELECT *,
           funnel_stage(retrieved_step, search_candidates)     AS retrieved,
           funnel_stage(snippet_shown_step, search_candidates) AS snippet_shown,
           funnel_stage(read_step, read_action)                AS read
    FROM staged
), reasons AS (
    -- queried and used hold or not on any log, so their reasons are always NULL (kept for one shape per stage).
    SELECT *,
           NULL::VARCHAR                                                     AS queried_reason,
           CASE WHEN retrieved IS NULL THEN search_candidates_reason END     AS retrieved_reason,
           CASE WHEN snippet_shown IS NULL THEN search_candidates_reason END AS snippet_shown_reason,
           CASE WHEN read IS NULL THEN read_action_reason END                AS read_reason,
           NULL::VARCHAR                                                     AS used_reason
    FROM stages
)
SELECT trajectory_id, run_id, question_id, dataset, question_type, chunk_id, title, hop, n_hops,
       hop_order, bridge_entity, answer_entities, queried, queried_step,
       retrieved, retrieved_step, best_rank, snippet_shown, snippet_shown_step,
       read, read_step, read_via, used, used_step, used_via, final_step,
       -- The combined text the replay page and the scanners show: the per-stage reasons, one part per capability
       -- (retrieved and snippet_shown share one); '' when every stage applies.
       concat_ws('; ', 'retrieved, snippet_shown do not apply: ' || coalesce(retrieved_reason, snippet_shown_reason),
                 'read does not apply: ' || read_reason)                  AS stage_reason,
       queried_reason, retrieved_reason, snippet_shown_reason, read_reason, used_reason,
       first_of_trajectory, first_of_hop
FROM reasons;
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
COMMENT ON COLUMN evidence_funnel.retrieved IS 'It was listed among search candidates; NULL when the log has no candidate chunk ids (retrieved_reason).';
COMMENT ON COLUMN evidence_funnel.retrieved_step IS 'First search step that listed it (NULL: never).';
COMMENT ON COLUMN evidence_funnel.best_rank IS 'Best (lowest) candidate rank it reached, from 1 (NULL: never retrieved).';
COMMENT ON COLUMN evidence_funnel.snippet_shown IS 'It was listed within the run''s shown top-k (runs.top_k; every listed candidate when none is recorded), so its snippet was before the agent; NULL without candidate chunk ids.';
COMMENT ON COLUMN evidence_funnel.snippet_shown_step IS 'First search step that listed it within the top-k (NULL: never).';
COMMENT ON COLUMN evidence_funnel.read IS 'Its full text entered the context: a read step, or a context injection; NULL when the log has no read action and it was not injected (read_reason).';
COMMENT ON COLUMN evidence_funnel.read_step IS 'First step that read or injected it (NULL: never).';
COMMENT ON COLUMN evidence_funnel.read_via IS 'How it first entered the context: read or context_injection (NULL: never).';
COMMENT ON COLUMN evidence_funnel.used IS 'The agent used it: a register item was resolved citing it, a later query names what it yields (answer_entities), or the final answer names what it yields.';
COMMENT ON COLUMN evidence_funnel.used_step IS 'First step of that use (a register event''s step, the later query, or the final step; NULL: not used, or the register event has no step).';
COMMENT ON COLUMN evidence_funnel.used_via IS 'The first use: register, next_query or final (NULL: not used).';
COMMENT ON COLUMN evidence_funnel.final_step IS 'The trajectory''s last final or forced_answer step (NULL: it has none).';
COMMENT ON COLUMN evidence_funnel.stage_reason IS 'Which stages do not apply to this log and why, in one text: the per-stage reasons below joined by ''; '' (empty when every stage applies).';
COMMENT ON COLUMN evidence_funnel.queried_reason IS 'Why queried does not apply; always NULL: any log''s queries show it.';
COMMENT ON COLUMN evidence_funnel.retrieved_reason IS 'Why retrieved does not apply (run_capabilities.search_candidates_reason); NULL exactly when retrieved is not NULL.';
COMMENT ON COLUMN evidence_funnel.snippet_shown_reason IS 'Why snippet_shown does not apply (run_capabilities.search_candidates_reason); NULL exactly when snippet_shown is not NULL.';
COMMENT ON COLUMN evidence_funnel.read_reason IS 'Why read does not apply (run_capabilities.read_action_reason); NULL exactly when read is not NULL.';
COMMENT ON COLUMN evidence_funnel.used_reason IS 'Why used does not apply; always NULL: any log''s register, queries and final answer show it.';
COMMENT ON COLUMN evidence_funnel.first_of_trajectory IS 'True on one row of each trajectory (its lowest hop): count(*) FILTER (first_of_trajectory) counts trajectories.';
COMMENT ON COLUMN evidence_funnel.first_of_hop IS 'True on one row of each (trajectory, hop): count(*) FILTER (first_of_hop) counts trajectories per hop.';
