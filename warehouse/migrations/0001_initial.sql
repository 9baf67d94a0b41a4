-- Initial schema: one table per canonical record kind, keyed by trajectory_id and positions.
-- No PRIMARY KEY constraints: DuckDB checks them eagerly, which breaks delete-then-insert of the
-- same key inside one transaction; the loader guarantees uniqueness instead.

CREATE TABLE runs (
    run_id            VARCHAR NOT NULL,
    source            VARCHAR,
    dataset           VARCHAR,
    controller        VARCHAR,
    condition         VARCHAR,
    intervention      VARCHAR,
    model             VARCHAR,
    temperature       DOUBLE,
    max_tokens        INTEGER,
    reasoning_effort  VARCHAR,
    protocol          VARCHAR,
    base_url          VARCHAR,
    retriever_kind    VARCHAR,
    top_k             INTEGER,
    rrf_k             INTEGER,
    embedding_model   VARCHAR,
    bm25_k1           DOUBLE,
    bm25_b            DOUBLE,
    seed              BIGINT,
    code_version      VARCHAR,
    started_at        VARCHAR,
    config            JSON
);

CREATE TABLE questions (
    dataset           VARCHAR NOT NULL,
    question_id       VARCHAR NOT NULL,
    text              VARCHAR,
    gold_answer       VARCHAR,
    aliases           VARCHAR[],
    question_type     VARCHAR,
    hop_count         INTEGER,
    gold_chunk_ids    VARCHAR[],
    gold_match        VARCHAR
);

CREATE TABLE chunks (
    dataset           VARCHAR NOT NULL,
    chunk_id          VARCHAR NOT NULL,
    title             VARCHAR,
    text              VARCHAR
);

CREATE TABLE trajectories (
    trajectory_id     VARCHAR NOT NULL,
    run_id            VARCHAR NOT NULL,
    question_id       VARCHAR NOT NULL,
    dataset           VARCHAR NOT NULL,
    question_dataset  VARCHAR,          -- the question's own dataset field as given (may be null)
    schema_version    VARCHAR,
    final_answer      VARCHAR,
    end_reason        VARCHAR,
    error             VARCHAR,
    started_at        VARCHAR,
    finished_at       VARCHAR,
    total_tokens_in   BIGINT,
    total_tokens_out  BIGINT,
    total_cost_usd    DOUBLE,
    total_latency_ms  DOUBLE,
    metadata          JSON,
    n_steps           INTEGER,
    -- Per-trajectory step aggregates, computed once at load so run-level views never scan steps.
    search_count      INTEGER,
    read_count        INTEGER,
    agent_actions     INTEGER,
    gate_rejections   INTEGER,
    injections        INTEGER,
    error_steps       INTEGER,
    passages_read     INTEGER,
    step_tokens_in    BIGINT,
    step_tokens_out   BIGINT,
    step_cost_usd     DOUBLE,
    step_latency_ms   DOUBLE,
    -- Gold reach and register resolution, fixed by the record: summed from gold_evidence_facts and
    -- register_events at load so the taxonomy views join no per-chunk or per-event rows.
    n_gold               BIGINT,
    n_gold_retrieved     BIGINT,
    n_gold_read          BIGINT,
    n_gold_snippet_only  BIGINT,
    n_gold_reached       BIGINT,
    n_register_items     BIGINT,
    n_register_resolved  BIGINT,
    register_complete    BOOLEAN,
    record_hash       VARCHAR NOT NULL,
    source_file       VARCHAR,
    ingested_at       TIMESTAMPTZ DEFAULT current_timestamp
);

CREATE TABLE steps (
    trajectory_id     VARCHAR NOT NULL,
    step_index        INTEGER NOT NULL,
    kind              VARCHAR NOT NULL,
    tool_name         VARCHAR,
    args              JSON,
    observation       VARCHAR,
    raw               VARCHAR,
    thought           VARCHAR,
    tokens_in         BIGINT,
    tokens_out        BIGINT,
    latency_ms        DOUBLE,
    cost_usd          DOUBLE,
    query             VARCHAR,
    deduplicated      BOOLEAN,
    chunk_ids         VARCHAR[],
    answer            VARCHAR,
    gate              VARCHAR,
    rejected_answer   VARCHAR,
    reason            VARCHAR,
    phase             VARCHAR,
    message           VARCHAR,
    error_type        VARCHAR
);

CREATE TABLE candidates (
    trajectory_id     VARCHAR NOT NULL,
    step_index        INTEGER NOT NULL,
    chunk_id          VARCHAR NOT NULL,
    rank              INTEGER NOT NULL,
    score             DOUBLE,
    retriever         VARCHAR,
    snippet           VARCHAR
);

-- Passages that entered the agent's context: by a read action or by context injection (via).
CREATE TABLE reads (
    trajectory_id     VARCHAR NOT NULL,
    step_index        INTEGER NOT NULL,
    passage_index     INTEGER NOT NULL,
    chunk_id          VARCHAR NOT NULL,
    text              VARCHAR,
    is_new            BOOLEAN,
    via               VARCHAR NOT NULL
);

CREATE TABLE register_events (
    trajectory_id        VARCHAR NOT NULL,
    event_index          INTEGER NOT NULL,
    item_id              VARCHAR NOT NULL,
    step_index           INTEGER,
    sub_question         VARCHAR,
    from_status          VARCHAR,
    to_status            VARCHAR,
    note                 VARCHAR,
    reason               VARCHAR,
    supporting_chunk_ids VARCHAR[]
);

-- origin: 'record' for judgments carried by the trajectory, 'judge' for ones added by `trajscope judge`.
CREATE TABLE judgments (
    trajectory_id     VARCHAR NOT NULL,
    judge             VARCHAR NOT NULL,
    score             DOUBLE,
    judge_model       VARCHAR,
    rationale         VARCHAR,
    origin            VARCHAR NOT NULL DEFAULT 'record',
    created_at        TIMESTAMPTZ DEFAULT current_timestamp
);

-- Per (trajectory, gold chunk of its question): when the agent first retrieved, read or was given it.
-- Derived at load from the trajectory's own record; the gold_evidence view reads it.
CREATE TABLE gold_evidence_facts (
    trajectory_id        VARCHAR NOT NULL,
    chunk_id             VARCHAR NOT NULL,
    first_retrieved_step INTEGER,
    best_rank            INTEGER,
    first_read_step      INTEGER,
    first_injected_step  INTEGER
);
