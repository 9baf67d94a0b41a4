-- Answer-presence intervention audit: one record per (audit, question), its contexts per baseline,
-- every reader output (unperturbed or under an intervention) and the compile / verify calls.
-- Keyed by record_id = audit_id || '::' || question_id; the audit loader replaces a record whole.

CREATE TABLE audit_records (
    record_id         VARCHAR NOT NULL,
    audit_id          VARCHAR NOT NULL,
    cell              VARCHAR NOT NULL,
    dataset           VARCHAR,
    question_id       VARCHAR NOT NULL,
    question          VARCHAR,
    gold              VARCHAR NOT NULL,
    aliases           VARCHAR[],
    reader_model      VARCHAR,
    compiler_a        VARCHAR,
    compiler_b        VARCHAR,
    error             VARCHAR,
    started_at        VARCHAR,
    finished_at       VARCHAR,
    metadata          JSON,
    record_hash       VARCHAR NOT NULL,
    source_file       VARCHAR,
    ingested_at       TIMESTAMPTZ DEFAULT current_timestamp
);

CREATE TABLE audit_contexts (
    record_id         VARCHAR NOT NULL,
    baseline          VARCHAR NOT NULL,
    text              VARCHAR
);

-- intervention: none | remove | placebo | insert_prepend | insert_mid | identity.
-- context: what the reader saw; NULL when it is the baseline's context (none, identity) or was not logged.
CREATE TABLE audit_outputs (
    record_id         VARCHAR NOT NULL,
    output_index      INTEGER NOT NULL,
    baseline          VARCHAR NOT NULL,
    intervention      VARCHAR NOT NULL,
    sentinel          VARCHAR,
    answer            VARCHAR,
    context           VARCHAR,
    f1                DOUBLE,
    error             VARCHAR,
    tokens_in         BIGINT,
    tokens_out        BIGINT,
    latency_ms        DOUBLE,
    cost_usd          DOUBLE,
    cached            BOOLEAN
);

CREATE TABLE audit_calls (
    record_id         VARCHAR NOT NULL,
    call_index        INTEGER NOT NULL,
    role              VARCHAR NOT NULL,
    baseline          VARCHAR NOT NULL,
    model             VARCHAR,
    tokens_in         BIGINT,
    tokens_out        BIGINT,
    latency_ms        DOUBLE,
    cost_usd          DOUBLE,
    cached            BOOLEAN,
    error             VARCHAR
);
