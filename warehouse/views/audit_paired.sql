-- One row per intervened reader output on an analysable record: F1 next to the unperturbed F1 of the same baseline (delta) and of raw retrieval.
CREATE OR REPLACE VIEW audit_paired AS
SELECT b.cell, b.audit_id, b.record_id, b.question_id, b.baseline, o.intervention, o.sentinel,
       CASE o.sentinel
            WHEN '[MASK]' THEN 'MASK' WHEN '[REMOVED]' THEN 'REMOVED'
            WHEN 'the answer was removed' THEN 'NATURAL' WHEN 'thing' THEN 'WORD'
            WHEN '###' THEN 'SYMBOL' ELSE o.sentinel END AS sentinel_label,
       b.bucket, b.ans_in_b1, b.ans_in_compile,
       -- remove / placebo target contexts that contain the gold; the inserts and the identity rerun those that lack it
       CASE WHEN o.intervention IN ('remove', 'placebo') THEN b.ans_in_compile
            ELSE NOT b.ans_in_compile END AS on_target,
       o.f1, base.f1 AS f1_base, raw.f1 AS f1_b1, o.f1 - base.f1 AS delta,
       o.answer, base.answer AS answer_base, o.context
FROM audit_buckets b
JOIN audit_outputs o
  ON o.record_id = b.record_id AND o.baseline = b.baseline AND o.intervention <> 'none'
JOIN audit_outputs base
  ON base.record_id = b.record_id AND base.baseline = b.baseline AND base.intervention = 'none'
LEFT JOIN audit_outputs raw
  ON raw.record_id = b.record_id AND raw.baseline = 'b1' AND raw.intervention = 'none'
WHERE b.analysable;
