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
COMMENT ON COLUMN audit_causal_pairs.cell IS 'Audit cell: the (reader, compiler, dataset) suite, e.g. S1; the audit id when the log names none.';
COMMENT ON COLUMN audit_causal_pairs.audit_id IS 'The audit run the record belongs to.';
COMMENT ON COLUMN audit_causal_pairs.record_id IS 'Audit record key; only 1->1 records with both a [MASK] remove and a [MASK] placebo output.';
COMMENT ON COLUMN audit_causal_pairs.question_id IS 'Question id: the pairing key across baselines and interventions.';
COMMENT ON COLUMN audit_causal_pairs.baseline IS 'Compiled setting: b2 MA compile, b3 MB compile, b4 MA compile + MB verify (b4s, b4lr: other verify modes).';
COMMENT ON COLUMN audit_causal_pairs.f1_base IS 'Reader token F1 on the same baseline''s unperturbed context, in [0, 1].';
COMMENT ON COLUMN audit_causal_pairs.f1_remove IS 'Reader F1 with every gold occurrence replaced by [MASK], in [0, 1].';
COMMENT ON COLUMN audit_causal_pairs.f1_placebo IS 'Reader F1 with a length-matched non-answer span replaced by [MASK], in [0, 1].';
COMMENT ON COLUMN audit_causal_pairs.delta_remove IS 'f1_remove - f1_base, in F1 units in [-1, 1].';
COMMENT ON COLUMN audit_causal_pairs.delta_placebo IS 'f1_placebo - f1_base, in F1 units in [-1, 1].';
COMMENT ON COLUMN audit_causal_pairs.delta_causal IS 'delta_remove - delta_placebo (= f1_remove - f1_placebo): the effect of the gold''s presence on reader F1, in F1 units.';
