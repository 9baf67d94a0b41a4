-- Forensic facts computed in Python by `trajscope judge` (entity coverage, answer checks).
-- Each row carries the record_hash of the trajectory version it was computed from, so views can
-- ignore rows left over from an older version after a re-ingest.

CREATE TABLE entity_coverage (
    trajectory_id     VARCHAR NOT NULL,
    record_hash       VARCHAR NOT NULL,
    extractor         VARCHAR NOT NULL,   -- 'regex' | 'spacy'
    n_entities        INTEGER NOT NULL,
    n_covered         INTEGER NOT NULL,
    coverage          DOUBLE,             -- NULL when the question has no entities
    entities          VARCHAR[],
    missing           VARCHAR[],
    computed_at       TIMESTAMPTZ DEFAULT current_timestamp
);

CREATE TABLE answer_checks (
    trajectory_id      VARCHAR NOT NULL,
    record_hash        VARCHAR NOT NULL,
    abstained          BOOLEAN NOT NULL,  -- engine.judges.is_abstention(final_answer)
    answer_in_snippets BOOLEAN NOT NULL,  -- normalised final answer occurs in a search snippet
    answer_in_reads    BOOLEAN NOT NULL,  -- ... and in a passage read by a read action
    computed_at        TIMESTAMPTZ DEFAULT current_timestamp
);
