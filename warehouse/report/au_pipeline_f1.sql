-- Per chosen cell ($cells) and baseline: analysable records with an unperturbed reader F1 and their mean F1 in points (the pipeline F1 per suite).
SELECT s.cell, o.baseline, count(*) AS n, 100 * avg(o.f1) AS f1_pts
FROM audit_record_status s
JOIN audit_outputs o ON o.record_id = s.record_id AND o.intervention = 'none' AND o.f1 IS NOT NULL
WHERE s.analysable AND list_contains($cells, s.cell)
GROUP BY s.cell, o.baseline
ORDER BY s.cell, o.baseline
