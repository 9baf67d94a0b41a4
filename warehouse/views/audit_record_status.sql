-- One row per audit record: its cell, whether the gold is too short to audit (gold_too_short), whether any call failed, ans_in_b1.
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
    SELECT r.*, gold_too_short(r.gold_trimmed) AS excluded_short_gold,
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
COMMENT ON COLUMN audit_record_status.record_id IS 'Audit record key audit_id::question_id.';
COMMENT ON COLUMN audit_record_status.audit_id IS 'The audit run the record belongs to.';
COMMENT ON COLUMN audit_record_status.cell IS 'Audit cell: the (reader, compiler, dataset) suite, e.g. S1; the audit id when the log names none.';
COMMENT ON COLUMN audit_record_status.dataset IS 'Dataset of the question (NULL: not recorded).';
COMMENT ON COLUMN audit_record_status.question_id IS 'Question id: the pairing key across baselines and interventions.';
COMMENT ON COLUMN audit_record_status.gold IS 'The original gold answer.';
COMMENT ON COLUMN audit_record_status.gold_trimmed IS 'The gold with leading and trailing whitespace removed: the string the presence tests look for.';
COMMENT ON COLUMN audit_record_status.reader_model IS 'Reader model (NULL: not recorded).';
COMMENT ON COLUMN audit_record_status.compiler_a IS 'Compiler MA: writes the b2 compile that b4 verifies (NULL: not recorded).';
COMMENT ON COLUMN audit_record_status.compiler_b IS 'Compiler MB, another model family: writes b3 and the b4 verify (NULL: not recorded).';
COMMENT ON COLUMN audit_record_status.excluded_short_gold IS 'The trimmed gold is too short to audit (macro gold_too_short): excluded from the audit, as in the paper.';
COMMENT ON COLUMN audit_record_status.has_error IS 'The record or any of its reader / compile / verify calls failed.';
COMMENT ON COLUMN audit_record_status.analysable IS 'Not excluded, no failure, and a b1 raw context exists: only these records enter the analysis.';
COMMENT ON COLUMN audit_record_status.ans_in_b1 IS 'The gold occurs in the b1 raw-retrieval context; NULL when the gold is excluded (excluded_short_gold) or there is no b1 context.';
COMMENT ON COLUMN audit_record_status.gold_regex IS 'The presence test: a case-insensitive occurrence of the literal trimmed gold, as the engine''s edits use it.';
