-- One row per (record, baseline, sentinel) on ans_in_compile = 1 where [MASK] and the placebo also ran: F1 under the sentinel, [MASK], placebo, unperturbed and raw retrieval.
CREATE OR REPLACE VIEW audit_sentinel_pairs AS
WITH per_record AS (
    SELECT record_id, baseline,
           max(f1) FILTER (intervention = 'remove' AND sentinel = '[MASK]') AS f1_mask,
           max(f1) FILTER (intervention = 'placebo' AND sentinel = '[MASK]') AS f1_placebo
    FROM audit_paired
    WHERE ans_in_compile
    GROUP BY record_id, baseline
)
SELECT p.cell, p.audit_id, p.record_id, p.question_id, p.baseline, p.sentinel_label AS sentinel,
       p.f1 AS f1_sentinel, r.f1_mask, r.f1_placebo, p.f1_base, p.f1_b1
FROM audit_paired p
JOIN per_record r USING (record_id, baseline)
WHERE p.intervention = 'remove' AND p.ans_in_compile
  AND r.f1_mask IS NOT NULL AND r.f1_placebo IS NOT NULL;
COMMENT ON COLUMN audit_sentinel_pairs.cell IS 'Audit cell: the (reader, compiler, dataset) suite, e.g. S1; the audit id when the log names none.';
COMMENT ON COLUMN audit_sentinel_pairs.audit_id IS 'The audit run the record belongs to.';
COMMENT ON COLUMN audit_sentinel_pairs.record_id IS 'Audit record key; only records where [MASK] remove and [MASK] placebo also ran on the baseline.';
COMMENT ON COLUMN audit_sentinel_pairs.question_id IS 'Question id: the pairing key across baselines and interventions.';
COMMENT ON COLUMN audit_sentinel_pairs.baseline IS 'Compiled setting: b2 MA compile, b3 MB compile, b4 MA compile + MB verify (b4s, b4lr: other verify modes).';
COMMENT ON COLUMN audit_sentinel_pairs.sentinel IS 'Sentinel label of this remove output: MASK, REMOVED, NATURAL, WORD, SYMBOL, or the raw text.';
COMMENT ON COLUMN audit_sentinel_pairs.f1_sentinel IS 'Reader F1 with the gold replaced by this sentinel, in [0, 1].';
COMMENT ON COLUMN audit_sentinel_pairs.f1_mask IS 'Reader F1 with the gold replaced by [MASK], in [0, 1].';
COMMENT ON COLUMN audit_sentinel_pairs.f1_placebo IS 'Reader F1 with a length-matched non-answer span replaced by [MASK], in [0, 1].';
COMMENT ON COLUMN audit_sentinel_pairs.f1_base IS 'Reader token F1 on the same baseline''s unperturbed context, in [0, 1].';
COMMENT ON COLUMN audit_sentinel_pairs.f1_b1 IS 'Reader token F1 on the b1 raw-retrieval context, in [0, 1] (NULL: no scored b1 output).';
