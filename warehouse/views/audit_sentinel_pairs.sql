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
