-- For a chunk's ids: the kept copy in this file (line, hash), whether a batch of this file holds it, and whether any batch does.
SELECT s.trajectory_id,
       max(s.line) FILTER (WHERE s.file_no = $file_no),
       max(s.record_hash) FILTER (WHERE s.file_no = $file_no),
       coalesce(bool_or(s.written) FILTER (WHERE s.file_no = $file_no), false),
       bool_or(s.written)
FROM split_ids s SEMI JOIN chunk_ids c USING (trajectory_id)
GROUP BY s.trajectory_id
