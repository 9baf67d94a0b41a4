-- One row per (record, baseline) in the 1->1 stratum with both [MASK] remove and placebo: delta_remove, delta_placebo and delta_causal = their difference.
CREATE OR REPLACE VIEW audit_causal_pairs AS
WITH arms AS (
    SELECT cell, audit_id, record_id, question_id, baseline,
           any_value(f1_base) AS f1_base,
           max(f1) FILTER (intervention = 'remove' AND sentinel = '[MASK]') AS f1_remove,
           max(f1) FILTER (intervention = 'placebo' AND sentinel = '[MASK]') AS f1_placebo
    FROM audit_paired
    WHERE bucket = '1->1'
    GROUP BY cell, audit_id, record_id, question_id, baseline
)
SELECT *, f1_remove - f1_base AS delta_remove, f1_placebo - f1_base AS delta_placebo,
       f1_remove - f1_placebo AS delta_causal
FROM arms
WHERE f1_remove IS NOT NULL AND f1_placebo IS NOT NULL;
