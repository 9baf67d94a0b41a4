-- The batch's read and injected passages.
INSERT INTO reads BY NAME SELECT * FROM stage_reads
