-- One row per audit record: its cell, whether the gold is too short to audit (< 2 characters), whether any call failed, ans_in_b1.
CREATE OR REPLACE VIEW audit_record_status AS
WITH failed AS (
    SELECT record_id FROM audit_outputs WHERE error IS NOT NULL
    UNION
    SELECT record_id FROM audit_calls WHERE error IS NOT NULL
),
trimmed AS (
    SELECT r.*, regexp_replace(r.gold, '^\s+|\s+$', '', 'g') AS gold_trimmed
    FROM audit_records r
),
flagged AS (
    SELECT r.*, length(r.gold_trimmed) < 2 AS excluded_short_gold,
           (r.error IS NOT NULL OR f.record_id IS NOT NULL) AS has_error,
           -- the same test as the engine: a case-insensitive occurrence of the literal gold
           '(?i)' || regexp_escape(r.gold_trimmed) AS gold_regex
    FROM trimmed r LEFT JOIN (SELECT DISTINCT record_id FROM failed) f USING (record_id)
)
SELECT rec.record_id, rec.audit_id, rec.cell, rec.dataset, rec.question_id, rec.gold, rec.gold_trimmed,
       rec.reader_model, rec.compiler_a, rec.compiler_b, rec.excluded_short_gold, rec.has_error,
       NOT rec.excluded_short_gold AND NOT rec.has_error AND raw.text IS NOT NULL AS analysable,
       CASE WHEN rec.excluded_short_gold OR raw.text IS NULL THEN NULL
            ELSE regexp_matches(raw.text, rec.gold_regex) END AS ans_in_b1,
       rec.gold_regex
FROM flagged rec
LEFT JOIN audit_contexts raw ON raw.record_id = rec.record_id AND raw.baseline = 'b1';
