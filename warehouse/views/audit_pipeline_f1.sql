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
COMMENT ON COLUMN audit_pipeline_f1.cell IS 'Audit cell: the (reader, compiler, dataset) suite, e.g. S1; the audit id when the log names none.';
COMMENT ON COLUMN audit_pipeline_f1.dataset IS 'Dataset of the question (NULL: not recorded).';
COMMENT ON COLUMN audit_pipeline_f1.baseline IS 'Setting: b1 raw retrieval, b2 MA compile, b3 MB compile, b4 MA compile + MB verify (b4s, b4lr: other verify modes).';
COMMENT ON COLUMN audit_pipeline_f1.n IS 'Analysable records with a scored, error-free unperturbed reader output in this setting.';
COMMENT ON COLUMN audit_pipeline_f1.f1_points IS 'Mean reader token F1 of the unperturbed output, in points (100 x F1).';
COMMENT ON COLUMN audit_pipeline_f1.n_paired_with_b1 IS 'Of those, records with a scored b1 output: the denominator of the lift.';
COMMENT ON COLUMN audit_pipeline_f1.lift_over_b1_points IS 'Mean (F1 - b1 F1) on the paired records, in points (0 for b1; NULL: no paired record).';
