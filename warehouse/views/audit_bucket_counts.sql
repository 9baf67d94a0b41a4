-- Per (cell, baseline): analysable records in each transition bucket and the answer-surfacing rate (share with ans_in_compile = 1).
CREATE OR REPLACE VIEW audit_bucket_counts AS
SELECT cell, baseline,
       count(*) AS n,
       count(*) FILTER (bucket = '0->0') AS n_0_0,
       count(*) FILTER (bucket = '0->1') AS n_0_1,
       count(*) FILTER (bucket = '1->1') AS n_1_1,
       count(*) FILTER (bucket = '1->0') AS n_1_0,
       avg(ans_in_b1::INTEGER) AS ans_in_b1_rate,
       avg(ans_in_compile::INTEGER) AS ans_in_compile_rate
FROM audit_buckets
WHERE analysable
GROUP BY cell, baseline
ORDER BY cell, baseline;
COMMENT ON COLUMN audit_bucket_counts.cell IS 'Audit cell: the (reader, compiler, dataset) suite, e.g. S1; the audit id when the log names none.';
COMMENT ON COLUMN audit_bucket_counts.baseline IS 'Compiled setting: b2 MA compile, b3 MB compile, b4 MA compile + MB verify (b4s, b4lr: other verify modes).';
COMMENT ON COLUMN audit_bucket_counts.n IS 'Analysable records with this baseline''s context.';
COMMENT ON COLUMN audit_bucket_counts.n_0_0 IS 'Records in bucket 0->0: gold in neither raw retrieval nor the compile.';
COMMENT ON COLUMN audit_bucket_counts.n_0_1 IS 'Records in bucket 0->1: the compile surfaced a gold absent from raw retrieval.';
COMMENT ON COLUMN audit_bucket_counts.n_1_1 IS 'Records in bucket 1->1: gold in raw retrieval and in the compile.';
COMMENT ON COLUMN audit_bucket_counts.n_1_0 IS 'Records in bucket 1->0: the compile dropped a gold present in raw retrieval.';
COMMENT ON COLUMN audit_bucket_counts.ans_in_b1_rate IS 'Share of the n records whose b1 raw context contains the gold.';
COMMENT ON COLUMN audit_bucket_counts.ans_in_compile_rate IS 'Answer-surfacing rate: share of the n records whose compiled context contains the gold.';
