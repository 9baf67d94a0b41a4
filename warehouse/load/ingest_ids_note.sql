-- The ids one batch met, with the hash stored when met ('' for none), into the report's ingest_ids.
INSERT INTO ingest_ids BY NAME SELECT trajectory_id, coalesce(before_hash, '') AS before_hash, seq FROM met_ids
