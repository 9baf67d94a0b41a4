-- AP Table 3 (App. §7): pipeline F1 per suite (cell) and setting (b1 raw retrieval, b2 MA compile, b3 MB compile, b4 MA compile + MB verify): the unperturbed reader output's mean token F1 over analysable records, in points, and its lift over b1 on the same records.
CREATE OR REPLACE VIEW audit_pipeline_f1 AS
WITH base AS (
    SELECT s.cell, s.dataset, o.record_id, o.baseline, o.f1
    FROM audit_outputs o
    JOIN audit_record_status s USING (record_id)
    WHERE o.intervention = 'none' AND s.analysable AND o.error IS NULL AND o.f1 IS NOT NULL
)
SELECT b.cell, b.dataset, b.baseline,
       count(*)                                                     AS n,
       100 * avg(b.f1)                                              AS f1_points,
       count(r.f1)                                                  AS n_paired_with_b1,
       100 * avg(b.f1 - r.f1)                                       AS lift_over_b1_points
FROM base b
LEFT JOIN base r ON r.record_id = b.record_id AND r.baseline = 'b1'
GROUP BY b.cell, b.dataset, b.baseline
ORDER BY b.cell, b.baseline;
