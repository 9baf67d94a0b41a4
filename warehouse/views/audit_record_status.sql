-- One row per audit record: its cell, whether the gold is too short to audit (< 2 characters), whether any call failed, ans_in_b1.
CREATE OR REPLACE VIEW audit_record_status AS
WITH failed AS (
    SELECT record_id FROM audit_outputs WHERE error IS NOT NULL
    UNION
    SELECT record_id FROM audit_calls WHERE error IS NOT NULL
),
rec AS (
    SELECT r.*, length(trim(r.gold)) < 2 AS excluded_short_gold,
           (r.error IS NOT NULL OR f.record_id IS NOT NULL) AS has_error,
           -- the same test as the engine: a case-insensitive occurrence of the literal gold
           '(?i)' || regexp_escape(trim(r.gold)) AS gold_regex
    FROM audit_records r LEFT JOIN (SELECT DISTINCT record_id FROM failed) f USING (record_id)
)
SELECT rec.record_id, rec.audit_id, rec.cell, rec.dataset, rec.question_id, rec.gold,
       rec.reader_model, rec.compiler_a, rec.compiler_b, rec.excluded_short_gold, rec.has_error,
       NOT rec.excluded_short_gold AND NOT rec.has_error AND raw.text IS NOT NULL AS analysable,
       CASE WHEN rec.excluded_short_gold OR raw.text IS NULL THEN NULL
            ELSE regexp_matches(raw.text, rec.gold_regex) END AS ans_in_b1,
       rec.gold_regex
FROM rec
LEFT JOIN audit_contexts raw ON raw.record_id = rec.record_id AND raw.baseline = 'b1';
