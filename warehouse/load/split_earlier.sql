-- For a chunk's ids: the copy the latest earlier file of this ingest kept (its file number, line and hash), to compare with this file's.
SELECT s.trajectory_id, arg_max(s.file_no, s.file_no), arg_max(s.line, s.file_no), arg_max(s.record_hash, s.file_no)
FROM split_ids s SEMI JOIN chunk_ids c USING (trajectory_id)
WHERE s.file_no < $file_no
GROUP BY s.trajectory_id
