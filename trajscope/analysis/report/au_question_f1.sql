-- One row per (chosen cell $cells, analysable record, baseline): unperturbed reader F1, log(1 + words) of the context, the context, gold and aliases (the answer-in-context flag is trajscope.format.mentions_answer).
SELECT s.cell, s.record_id, s.question_id, c.baseline, o.f1,
       ln(1 + len(string_split_regex(trim(coalesce(c.text, '')), '\s+'))) AS log_len,
       c.text AS context, s.gold_trimmed AS gold, coalesce(r.aliases, []::VARCHAR[]) AS aliases
FROM audit_record_status s
JOIN audit_records r ON r.record_id = s.record_id
JOIN audit_contexts c ON c.record_id = s.record_id
JOIN audit_outputs o ON o.record_id = s.record_id AND o.baseline = c.baseline AND o.intervention = 'none'
WHERE s.analysable AND o.f1 IS NOT NULL AND list_contains($cells, s.cell)
ORDER BY s.cell, s.record_id, c.baseline
