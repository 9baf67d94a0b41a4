-- One row per (audit record, compiled baseline): ans_in_b1, ans_in_compile and the transition bucket 0->0, 0->1, 1->1 or 1->0.
CREATE OR REPLACE VIEW audit_buckets AS
SELECT s.record_id, s.audit_id, s.cell, s.dataset, s.question_id, s.gold, s.gold_trimmed, c.baseline,
       s.excluded_short_gold, s.has_error, s.analysable, s.ans_in_b1,
       CASE WHEN s.excluded_short_gold THEN NULL ELSE regexp_matches(c.text, s.gold_regex) END AS ans_in_compile,
       CASE WHEN s.excluded_short_gold OR s.ans_in_b1 IS NULL THEN NULL
            ELSE s.ans_in_b1::INTEGER || '->' || regexp_matches(c.text, s.gold_regex)::INTEGER END AS bucket,
       s.gold_regex, c.text AS context
FROM audit_record_status s
JOIN audit_contexts c ON c.record_id = s.record_id AND c.baseline <> 'b1';
COMMENT ON COLUMN audit_buckets.record_id IS 'Audit record key audit_id::question_id; one row per compiled baseline of the record.';
COMMENT ON COLUMN audit_buckets.audit_id IS 'The audit run the record belongs to.';
COMMENT ON COLUMN audit_buckets.cell IS 'Audit cell: the (reader, compiler, dataset) suite, e.g. S1; the audit id when the log names none.';
COMMENT ON COLUMN audit_buckets.dataset IS 'Dataset of the question (NULL: not recorded).';
COMMENT ON COLUMN audit_buckets.question_id IS 'Question id: the pairing key across baselines and interventions.';
COMMENT ON COLUMN audit_buckets.gold IS 'The original gold answer.';
COMMENT ON COLUMN audit_buckets.gold_trimmed IS 'The gold with leading and trailing whitespace removed: the string the presence tests look for.';
COMMENT ON COLUMN audit_buckets.baseline IS 'Compiled setting: b2 MA compile, b3 MB compile, b4 MA compile + MB verify (b4s, b4lr: other verify modes).';
COMMENT ON COLUMN audit_buckets.excluded_short_gold IS 'The trimmed gold is shorter than 2 characters: excluded from the audit, as in the paper.';
COMMENT ON COLUMN audit_buckets.has_error IS 'The record or any of its reader / compile / verify calls failed.';
COMMENT ON COLUMN audit_buckets.analysable IS 'Not excluded, no failure, and a b1 raw context exists: only these records enter the analysis.';
COMMENT ON COLUMN audit_buckets.ans_in_b1 IS 'The gold occurs in the b1 raw-retrieval context; NULL when the gold is excluded (excluded_short_gold) or there is no b1 context.';
COMMENT ON COLUMN audit_buckets.ans_in_compile IS 'The gold occurs in this baseline''s compiled context; NULL when the gold is excluded (excluded_short_gold) or the context text is missing.';
COMMENT ON COLUMN audit_buckets.bucket IS 'Transition bucket ans_in_b1->ans_in_compile: 0->0, 0->1, 1->1 or 1->0; NULL when either flag is NULL.';
COMMENT ON COLUMN audit_buckets.gold_regex IS 'The presence test: a case-insensitive occurrence of the literal trimmed gold, as the engine''s edits use it.';
COMMENT ON COLUMN audit_buckets.context IS 'The baseline''s compiled context the tests ran on.';
