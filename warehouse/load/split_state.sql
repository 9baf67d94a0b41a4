-- Validation's memory of a multi-file ingest (in-memory DuckDB): per file and id the kept copy's line and hash, and whether a batch holds it.
CREATE TABLE split_ids (file_no INTEGER, trajectory_id VARCHAR, line BIGINT, record_hash VARCHAR, written BOOLEAN)
