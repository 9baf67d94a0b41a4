-- Every id an ingest meets, with the hash stored when met ('' for none) in batch order: the report's counts, kept in DuckDB.
CREATE OR REPLACE TEMP TABLE ingest_ids (trajectory_id VARCHAR, before_hash VARCHAR, seq BIGINT)
