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
