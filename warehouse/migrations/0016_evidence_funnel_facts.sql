-- The evidence funnel's per-(trajectory, gold passage) stages stored at load (warehouse/load/evidence_funnel_facts.sql), and which definition computed them; an existing warehouse is filled on its next write open (the stored hash is missing, so warehouse._derived recomputes every trajectory).
CREATE TABLE IF NOT EXISTS evidence_funnel_facts (
    trajectory_id      VARCHAR NOT NULL,
    run_id             VARCHAR,
    question_id        VARCHAR,
    dataset            VARCHAR,
    question_type      VARCHAR,
    chunk_id           VARCHAR NOT NULL,
    title              VARCHAR,
    hop                BIGINT,
    n_hops             BIGINT,
    hop_order          VARCHAR,
    bridge_entity      VARCHAR,
    answer_entities    VARCHAR[],
    queried            BOOLEAN,
    queried_step       INTEGER,
    retrieved_step     INTEGER,
    best_rank          INTEGER,
    snippet_shown_step INTEGER,
    read_step          INTEGER,
    read_via           VARCHAR,
    used               BOOLEAN,
    used_step          INTEGER,
    used_via           VARCHAR,
    final_step         INTEGER
);
COMMENT ON TABLE evidence_funnel_facts IS 'Per (trajectory, gold passage): the evidence funnel stages that need no run capability, computed at load and after question or chunk upserts; evidence_funnel adds the capability stages.';
COMMENT ON COLUMN evidence_funnel_facts.trajectory_id IS 'Trajectory id (trajectories.trajectory_id).';
COMMENT ON COLUMN evidence_funnel_facts.run_id IS 'Run id (runs.run_id).';
COMMENT ON COLUMN evidence_funnel_facts.question_id IS 'Question id: the pairing key across runs.';
COMMENT ON COLUMN evidence_funnel_facts.dataset IS 'Dataset key of the trajectory (trajectories.dataset).';
COMMENT ON COLUMN evidence_funnel_facts.question_type IS 'Question type from the dataset (NULL: the source gives none).';
COMMENT ON COLUMN evidence_funnel_facts.chunk_id IS 'The gold passage (a chunk of the question''s gold_chunk_ids).';
COMMENT ON COLUMN evidence_funnel_facts.title IS 'The gold passage''s title (NULL: the corpus is not loaded or the chunk has none).';
COMMENT ON COLUMN evidence_funnel_facts.hop IS 'Hop position from 1: the dataset''s reasoning order, else order of first appearance in the trajectory (hop_order says which).';
COMMENT ON COLUMN evidence_funnel_facts.n_hops IS 'Gold passages of the question (matched chunks).';
COMMENT ON COLUMN evidence_funnel_facts.hop_order IS 'Where hop comes from: decomposition, evidence, supporting_facts, chain, or first_appearance (no order stated).';
COMMENT ON COLUMN evidence_funnel_facts.bridge_entity IS 'The entity a query names this hop by besides its title (NULL: the dataset names none).';
COMMENT ON COLUMN evidence_funnel_facts.answer_entities IS 'What the hop yields (the dataset''s hop answers, else the gold answer and aliases where evidence_funnel says); [] otherwise.';
COMMENT ON COLUMN evidence_funnel_facts.queried IS 'A search query names the passage''s title or its bridge entity (names_entity).';
COMMENT ON COLUMN evidence_funnel_facts.queried_step IS 'First search step whose query names it (NULL: never).';
COMMENT ON COLUMN evidence_funnel_facts.retrieved_step IS 'First search step that listed it (NULL: never).';
COMMENT ON COLUMN evidence_funnel_facts.best_rank IS 'Best (lowest) candidate rank it reached, from 1 (NULL: never retrieved).';
COMMENT ON COLUMN evidence_funnel_facts.snippet_shown_step IS 'First search step that listed it within the run''s top-k (NULL: never).';
COMMENT ON COLUMN evidence_funnel_facts.read_step IS 'First step that read or injected it (NULL: never).';
COMMENT ON COLUMN evidence_funnel_facts.read_via IS 'How it first entered the context: read or context_injection (NULL: never).';
COMMENT ON COLUMN evidence_funnel_facts.used IS 'The agent used it: a register item resolved citing it, a later query names what it yields, or the final answer does.';
COMMENT ON COLUMN evidence_funnel_facts.used_step IS 'First step of that use (NULL: not used, or the register event has no step).';
COMMENT ON COLUMN evidence_funnel_facts.used_via IS 'The first use: register, next_query or final (NULL: not used).';
COMMENT ON COLUMN evidence_funnel_facts.final_step IS 'The trajectory''s last final or forced_answer step (NULL: it has none).';

CREATE TABLE IF NOT EXISTS derived_facts_state (
    name            VARCHAR NOT NULL,
    definition_hash VARCHAR NOT NULL,
    applied_at      TIMESTAMPTZ DEFAULT current_timestamp
);
COMMENT ON TABLE derived_facts_state IS 'Per load-time derived table: the hash of the SQL definition (and measure macros) that computed its rows; a differing hash makes the next write open recompute every row.';
COMMENT ON COLUMN derived_facts_state.name IS 'The derived table (evidence_funnel_facts).';
COMMENT ON COLUMN derived_facts_state.definition_hash IS 'sha256 of its load SQL and the measure macros it calls, when its rows were computed.';
COMMENT ON COLUMN derived_facts_state.applied_at IS 'When every row was last recomputed under that definition.';
