-- A validated chunk's kept copies (file, id, line, hash, whether a batch holds it) into the split state.
INSERT INTO split_ids BY NAME SELECT file_no, trajectory_id, line, record_hash, written FROM chunk_rows
