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
COMMENT ON COLUMN audit_paired.cell IS 'Audit cell: the (reader, compiler, dataset) suite, e.g. S1; the audit id when the log names none.';
COMMENT ON COLUMN audit_paired.audit_id IS 'The audit run the record belongs to.';
COMMENT ON COLUMN audit_paired.record_id IS 'Audit record key audit_id::question_id (analysable records only).';
COMMENT ON COLUMN audit_paired.question_id IS 'Question id: the pairing key across baselines and interventions.';
COMMENT ON COLUMN audit_paired.baseline IS 'Compiled setting: b2 MA compile, b3 MB compile, b4 MA compile + MB verify (b4s, b4lr: other verify modes).';
COMMENT ON COLUMN audit_paired.intervention IS 'Edit of the context: remove, placebo, insert_prepend, insert_mid or identity (unchanged rerun).';
COMMENT ON COLUMN audit_paired.sentinel IS 'Replacement text of remove / placebo ([MASK], [REMOVED], ...; NULL for the other edits).';
COMMENT ON COLUMN audit_paired.sentinel_label IS 'Sentinel of remove / placebo: MASK, REMOVED, NATURAL, WORD, SYMBOL, or the raw text for another; NULL for the other edits.';
COMMENT ON COLUMN audit_paired.bucket IS 'Transition bucket ans_in_b1->ans_in_compile: 0->0, 0->1, 1->1 or 1->0; NULL when either flag is NULL.';
COMMENT ON COLUMN audit_paired.ans_in_b1 IS 'The gold occurs in the b1 raw-retrieval context; NULL when the gold is excluded (excluded_short_gold) or there is no b1 context.';
COMMENT ON COLUMN audit_paired.ans_in_compile IS 'The gold occurs in this baseline''s compiled context; NULL when the gold is excluded (excluded_short_gold).';
COMMENT ON COLUMN audit_paired.on_target IS 'The edit applies to this context: remove / placebo where the compile contains the gold, inserts and identity where it does not.';
COMMENT ON COLUMN audit_paired.f1 IS 'Reader token F1 against the original gold under the intervention, in [0, 1].';
COMMENT ON COLUMN audit_paired.f1_base IS 'Reader token F1 on the same baseline''s unperturbed context, in [0, 1]; an output without one is not in this view.';
COMMENT ON COLUMN audit_paired.f1_b1 IS 'Reader token F1 on the b1 raw-retrieval context, in [0, 1] (NULL: no scored b1 output).';
COMMENT ON COLUMN audit_paired.delta IS 'Paired delta f1 - f1_base, in F1 units in [-1, 1] (views ending _pts show 100 x).';
COMMENT ON COLUMN audit_paired.answer IS 'The reader''s answer under the intervention.';
COMMENT ON COLUMN audit_paired.answer_base IS 'The reader''s answer on the unperturbed context.';
COMMENT ON COLUMN audit_paired.context IS 'The edited context the reader saw (NULL: the baseline''s own, for identity, or not logged).';
