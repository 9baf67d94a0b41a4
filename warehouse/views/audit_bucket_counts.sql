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
